/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * What the packet fuzzers (rc_fuzz.c, transport_fuzz.c) share: seeded
 * random numbers, so that a seed gives the same packets; the damage every
 * fuzz packet may take on its way; and the loop that sends them in batches
 * until enough of them reached the daemon, as its port counters say.
 */
#ifndef ROCEMU_TESTS_E2E_FUZZ_H
#define ROCEMU_TESTS_E2E_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "forge.h"

#define FUZZ_DEFAULT_PACKETS 100000

void fuzz_seed(uint64_t seed);
uint64_t fuzz_rnd(void);
uint32_t fuzz_below(uint32_t n);		/* 0 <= value < n (0 for n 0) */
bool fuzz_chance(unsigned int percent);

/* Now and then a bit flipped, the packet cut short or trailing bytes added: its new length. */
size_t fuzz_damage(uint8_t *pkt, size_t len);

/*
 * The arguments DEVICE_A DEVICE_B ROCEMU [PACKETS [SEED]]: *want, the
 * seed taken and printed, the CLI's path set. False (usage printed) when
 * they are wrong.
 */
bool fuzz_args(int argc, char **argv, unsigned long *want);

struct fuzz_packet {
	uint8_t *data;		/* room for FORGE_MAX bytes and the ICRC */
	size_t len;		/* without the ICRC */
	struct forge *from;
	uint32_t dst;		/* the device it is sent to */
};

struct fuzz_source {
	bool (*service)(void);			/* between two batches; false stops the fuzz */
	void (*next)(struct fuzz_packet *p);	/* the next fuzz packet */
	unsigned int batch;
};

/*
 * Batches from src until want packets reached devices first and second
 * (port_rcv_packets less what they sent each other), `rocemu status`
 * answering all along, within 150 s. A check line says how it went.
 */
void fuzz_run(const char *first, const char *second, unsigned long want,
	      const struct fuzz_source *src);

#endif /* ROCEMU_TESTS_E2E_FUZZ_H */
