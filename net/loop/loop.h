/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The daemon's event loop. The core never sees io_uring or epoll: each
 * backend (loop_uring.c, loop_epoll.c) implements struct rocemu_loop_ops
 * and turns native completions into neutral events that the core
 * dispatches: fd readiness, received datagrams, expired timers.
 * All functions return 0 or a negative errno unless said otherwise.
 */
#ifndef ROCEMU_NET_LOOP_H
#define ROCEMU_NET_LOOP_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "net/roce/ipv4.h"

struct rocemu_loop;

/* Largest UDP payload over IPv4. */
#define ROCEMU_LOOP_MAX_DGRAM 65507u

enum rocemu_loop_backend {
	ROCEMU_LOOP_AUTO,	/* io_uring when it works, else epoll (ROCEMU_NET overrides) */
	ROCEMU_LOOP_URING,
	ROCEMU_LOOP_EPOLL,
};

/* Readiness of a watched fd: a mask of POLLIN, POLLOUT, POLLERR, POLLHUP. */
typedef void (*rocemu_fd_cb)(void *arg, int fd, uint32_t revents);

/* One received UDP datagram (a GRO batch is split into datagrams before the callback). */
struct rocemu_dgram {
	const uint8_t *data;
	size_t len;
	struct sockaddr_in src;
	/* More of the same receive follow: data stay valid until the last one's callback returns. */
	bool more;
	/*
	 * Handed over inside this process from rocemu_loop_send_vouched: the
	 * bytes are those its sender vouched for (an integrity check it made).
	 */
	bool vouched;
	/*
	 * Its IPv4 header's fields as far as they are known: TTL and TOS as the
	 * kernel shows them (IP_RECVTTL, IP_RECVTOS). A UDP socket does not show
	 * the ID or flags; handed over inside this process they are those the
	 * kernel would have written (rocemu_ipv4_send_id, DF), and ip_known says so.
	 */
	struct rocemu_ipv4_fields ip;
	bool ip_known;
	/* Its UDP checksum was 0 (set by the receiver that knows: udp_port.c's second socket). */
	bool udp_check_zero;
	/* Its place in the GRO batch (or in-loop GSO send) it came in. */
	uint16_t seg;
	/* CLOCK_REALTIME nanoseconds it arrived (SO_TIMESTAMPNS), 0 when not known. */
	uint64_t rx_ns;
};
typedef void (*rocemu_dgram_cb)(void *arg, int fd, const struct rocemu_dgram *d);

typedef void (*rocemu_timer_cb)(void *arg);

/*
 * Called before every poll, so that timers falling due one after another
 * cannot starve it; may_sleep is false when a timer is due (the loop then
 * polls without sleeping whatever the hook says). Return nonzero if work
 * was found (the loop then polls again without sleeping), zero to let it
 * sleep. The daemon uses it to scan doorbells and publish its sleeping flag.
 */
typedef int (*rocemu_idle_cb)(void *arg, bool may_sleep);

/*
 * Called once per receive, before the callbacks of its datagrams: the
 * daemon learns of work before it does it (it stops looking asleep).
 */
typedef void (*rocemu_rx_hook_cb)(void *arg);

/*
 * Create a loop. backend AUTO reads ROCEMU_NET (io_uring|epoll) and otherwise
 * tries io_uring first, logging one line saying why it fell back to epoll.
 * Returns NULL with errno set on failure.
 */
struct rocemu_loop *rocemu_loop_new(enum rocemu_loop_backend backend);
void rocemu_loop_free(struct rocemu_loop *loop);
/* "io_uring" or "epoll". */
const char *rocemu_loop_backend_name(const struct rocemu_loop *loop);

/* Watch fd for POLLIN (and errors/hang-up); cb runs on every readiness until unwatched. */
int rocemu_loop_watch_fd(struct rocemu_loop *loop, int fd, rocemu_fd_cb cb, void *arg);
/* Stop watching fd. Safe to call from inside fd's own callback. Does not close fd. */
int rocemu_loop_unwatch_fd(struct rocemu_loop *loop, int fd);

/* Receive every datagram arriving on UDP socket fd through cb. */
int rocemu_loop_add_udp(struct rocemu_loop *loop, int fd, rocemu_dgram_cb cb, void *arg);
int rocemu_loop_remove_udp(struct rocemu_loop *loop, int fd);

/*
 * Make send-only socket fd known to the loop by the address it is bound
 * to, so that in-loop delivery can name it as a datagram's source.
 */
int rocemu_loop_add_source(struct rocemu_loop *loop, int fd);
int rocemu_loop_remove_source(struct rocemu_loop *loop, int fd);

/*
 * In-loop delivery (off by default): a unicast datagram from a socket the
 * loop knows (add_udp or add_source) to the address of a socket it
 * receives on (add_udp) is handed to that socket's callback at the top of
 * the next turn of the loop, as the kernel would deliver it (same bytes,
 * source address and GSO segments), without the kernel. Anything else is
 * sent through the kernel as before.
 */
void rocemu_loop_set_local_delivery(struct rocemu_loop *loop, bool on);
bool rocemu_loop_local_delivery(const struct rocemu_loop *loop);
/* Datagrams handed over inside this process that found receiving socket fd's queue full. */
uint64_t rocemu_loop_local_drops_of(const struct rocemu_loop *loop, int fd);

/*
 * Queue one datagram (or, with gso_size > 0, a batch of segments of
 * gso_size bytes sent as one UDP_SEGMENT send) on fd to dst. Data are
 * copied; queued sends go out in batches when the loop flushes (before it
 * sleeps, or when rocemu_loop_flush is called).
 */
int rocemu_loop_send(struct rocemu_loop *loop, int fd, const struct sockaddr_in *dst,
		     const struct iovec *iov, int iovcnt, uint16_t gso_size);
/*
 * The same, from a sender that vouches for the bytes (their checksum is
 * right): a receiver of this loop gets them with rocemu_dgram.vouched set
 * and need not check them again. Through the kernel nothing is vouched for.
 */
int rocemu_loop_send_vouched(struct rocemu_loop *loop, int fd, const struct sockaddr_in *dst,
			     const struct iovec *iov, int iovcnt, uint16_t gso_size);
int rocemu_loop_flush(struct rocemu_loop *loop);

/* Monotonic nanoseconds (CLOCK_MONOTONIC). */
uint64_t rocemu_now_ns(void);

/* Run cb once at deadline_ns (rocemu_now_ns() time). Returns a timer id > 0, or 0 with errno set. */
uint64_t rocemu_loop_timer_add(struct rocemu_loop *loop, uint64_t deadline_ns,
			       rocemu_timer_cb cb, void *arg);
/* Cancel a pending timer; a no-op for one that already ran. */
void rocemu_loop_timer_cancel(struct rocemu_loop *loop, uint64_t id);

/*
 * A timer its owner embeds, as the kernel's timer_list: it knows its
 * callback, is armed until it runs or is disarmed, and arming an armed
 * one changes nothing.
 */
struct rocemu_loop_timer {
	uint64_t id;		/* the loop's timer while armed; 0: not armed */
	rocemu_timer_cb cb;
	void *arg;
};

void rocemu_loop_timer_init(struct rocemu_loop_timer *t, rocemu_timer_cb cb, void *arg);
/* Arm t to run at deadline_ns unless it is armed already: 0, or -errno. */
int rocemu_loop_timer_arm(struct rocemu_loop *loop, struct rocemu_loop_timer *t,
			  uint64_t deadline_ns);
void rocemu_loop_timer_disarm(struct rocemu_loop *loop, struct rocemu_loop_timer *t);
static inline bool rocemu_loop_timer_armed(const struct rocemu_loop_timer *t)
{
	return t->id != 0;
}

void rocemu_loop_set_idle_hook(struct rocemu_loop *loop, rocemu_idle_cb cb, void *arg);
void rocemu_loop_set_rx_hook(struct rocemu_loop *loop, rocemu_rx_hook_cb cb, void *arg);

/* Dispatch events until rocemu_loop_stop. Returns 0, or -errno on a fatal backend error. */
int rocemu_loop_run(struct rocemu_loop *loop);
/* Make rocemu_loop_run return after the current dispatch (async-signal-safe). */
void rocemu_loop_stop(struct rocemu_loop *loop);

#endif /* ROCEMU_NET_LOOP_H */
