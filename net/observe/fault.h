/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Deterministic egress fault injection: each outgoing datagram is passed,
 * dropped, duplicated, reordered or corrupted by rate, and optionally
 * delayed. The draws come from the injector's own PRNG (xoshiro256**
 * seeded through splitmix64 from the seed and a per-device salt), so a run
 * with the same configuration and traffic repeats exactly.
 *
 * Text form: comma-separated key=value items, e.g.
 *   drop=0.05,dup=0.02,reorder=0.02,corrupt=0.01,delay_us=200,seed=7
 * The four rates are per-datagram probabilities from 0 to 1 adding up to at
 * most 1 (one datagram gets at most one of the four faults); delay_us
 * holds every datagram that is sent (0 to ROCEMU_FAULT_DELAY_US_MAX);
 * seed is decimal or 0x-prefixed hex. Absent keys are 0; "" means no faults.
 */
#ifndef ROCEMU_NET_FAULT_H
#define ROCEMU_NET_FAULT_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/loop/loop.h"

#define ROCEMU_FAULT_DELAY_US_MAX 10000000u	/* 10 s */
/* A reordered datagram waits at most this long (or its delay, if longer) for a successor. */
#define ROCEMU_FAULT_HOLD_NS (1000ull * 1000ull)
/* Datagrams waiting for their delay, per injector; more → -ENOBUFS. */
#define ROCEMU_FAULT_QUEUE_MAX 65536u
/* Enough for any configuration rocemu_fault_config_format() writes. */
#define ROCEMU_FAULT_TEXT_MAX 256

struct rocemu_fault_config {
	double drop;		/* rates: probability per datagram, 0..1 */
	double dup;
	double reorder;
	double corrupt;
	uint32_t delay_us;	/* every datagram sent goes out this much later */
	uint64_t seed;
};

enum rocemu_fault_action {
	ROCEMU_FAULT_PASS,
	ROCEMU_FAULT_DROP,
	ROCEMU_FAULT_DUPLICATE,	/* sent twice in a row */
	ROCEMU_FAULT_REORDER,	/* held, then sent right after the next datagram sent */
	ROCEMU_FAULT_CORRUPT,	/* one bit flipped past the BTH: the receiver's ICRC check fails */
};

/*
 * Corruption flips bit `corrupt_bit` of the UDP payload (byte
 * corrupt_bit / 8, mask 1 << corrupt_bit % 8), drawn uniformly from the
 * bytes after the BTH: [ROCEMU_BTH_BYTES, len), i.e. extension headers,
 * payload, pad or ICRC, all covered by the ICRC. The BTH stays intact (its
 * F/B byte is not covered by the ICRC, and an intact BTH lets the receiver
 * name the QP and PSN of the bad packet). A datagram of at most
 * ROCEMU_BTH_BYTES bytes gets a bit anywhere in [0, len); an empty one is
 * passed unchanged.
 */
struct rocemu_fault_decision {
	enum rocemu_fault_action action;
	uint32_t corrupt_bit;	/* CORRUPT only */
	uint64_t delay_ns;	/* 0 for DROP */
};

struct rocemu_fault_counters {
	uint64_t dropped;
	uint64_t duplicated;
	uint64_t reordered;	/* held datagrams that went out after a later one */
	uint64_t corrupted;
	uint64_t delayed;	/* datagrams (not copies) sent after delay_us */
};

/*
 * Parse text into *cfg. Returns 0, or -EINVAL for an unknown key, a key
 * given twice, a value out of range or not a number, or rates adding up to
 * more than 1; then err (when errsize > 0) holds a one-line message naming
 * the key or item, and *cfg is unchanged.
 */
int rocemu_fault_config_parse(const char *text, struct rocemu_fault_config *cfg, char *err,
			      size_t errsize);

/*
 * Write cfg as text into buf: the non-zero keys in the order drop, dup,
 * reorder, corrupt, delay_us, seed; rates in the shortest form that parses
 * back to the same double; "" when everything is 0. Returns the length
 * written, -EINVAL for a NULL argument, -ENOSPC when size is too small.
 */
int rocemu_fault_config_format(const struct rocemu_fault_config *cfg, char *buf, size_t size);

/* True when cfg injects anything (a rate or a delay is non-zero). */
bool rocemu_fault_config_active(const struct rocemu_fault_config *cfg);

struct rocemu_fault;

/*
 * Create an injector sending through loop (which must outlive it). salt
 * tells devices apart, e.g. the device's IPv4 address, so that two devices
 * with one seed draw different sequences. Returns NULL with errno EINVAL
 * (NULL argument) or ENOMEM.
 */
struct rocemu_fault *rocemu_fault_new(struct rocemu_loop *loop,
				      const struct rocemu_fault_config *cfg, uint64_t salt);

/*
 * Queue every held and delayed datagram on the loop at once (nothing is
 * lost when faults are switched off), cancel the injector's timers, free f.
 * NULL is a no-op.
 */
void rocemu_fault_free(struct rocemu_fault *f);

/*
 * Draw the fault for the next datagram of len bytes. Only draws: the
 * datagram and the counters are untouched. Each call takes one PRNG draw,
 * and a second one for CORRUPT, so the sequence of actions depends on the
 * seed and salt alone. Returns d->action.
 */
enum rocemu_fault_action rocemu_fault_decide(struct rocemu_fault *f, size_t len,
					     struct rocemu_fault_decision *d);

/*
 * Send one datagram (the UDP payload data[0, len)) on UDP socket fd to dst
 * through the injector: draw its fault with rocemu_fault_decide(), carry it
 * out with rocemu_loop_send() (at once, or from a loop timer for delayed
 * and held datagrams) and count it. now_ns is rocemu_now_ns() time. A held
 * datagram goes out right after the next datagram that is sent, or after
 * max(ROCEMU_FAULT_HOLD_NS, delay) when none comes. At most one datagram
 * is held: a REORDER drawn while one is held is carried out as PASS.
 * Without an active configuration the datagram goes to rocemu_loop_send()
 * as is. Returns the action carried out (>= 0), or -EINVAL (NULL argument,
 * fd < 0), -EMSGSIZE (len > 65507) with nothing drawn, or -ENOMEM,
 * -ENOBUFS (ROCEMU_FAULT_QUEUE_MAX datagrams waiting) or an error of
 * rocemu_loop_send() after the draw, the datagram then being lost.
 */
int rocemu_fault_apply(struct rocemu_fault *f, int fd, const struct sockaddr_in *dst,
		       const uint8_t *data, size_t len, uint64_t now_ns);

/* Faults carried out so far by rocemu_fault_apply(). */
const struct rocemu_fault_counters *rocemu_fault_counters(const struct rocemu_fault *f);

/* The configuration f was created with. */
const struct rocemu_fault_config *rocemu_fault_config(const struct rocemu_fault *f);

#endif /* ROCEMU_NET_FAULT_H */
