/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "fuzz.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "net/roce/roce_hdr.h"
#include "verbs_pair.h"

#define COUNT_EVERY 20000	/* packets between two reads of the port counters */
#define TIME_LIMIT_MS 150000

static uint64_t fuzz_state = 1;

void fuzz_seed(uint64_t seed)
{
	fuzz_state = seed ? seed : 1;	/* xorshift stays at 0 from 0 */
}

/* xorshift64* */
uint64_t fuzz_rnd(void)
{
	fuzz_state ^= fuzz_state >> 12;
	fuzz_state ^= fuzz_state << 25;
	fuzz_state ^= fuzz_state >> 27;
	return fuzz_state * 0x2545f4914f6cdd1dull;
}

uint32_t fuzz_below(uint32_t n)
{
	return n ? (uint32_t)(fuzz_rnd() % n) : 0;
}

bool fuzz_chance(unsigned int percent)
{
	return fuzz_below(100) < percent;
}

size_t fuzz_damage(uint8_t *pkt, size_t len)
{
	if (fuzz_chance(5))
		pkt[fuzz_below((uint32_t)len)] ^= (uint8_t)(1u << fuzz_below(8));
	if (fuzz_chance(8))	/* truncated, and the ICRC made for what is left */
		return ROCEMU_BTH_BYTES + fuzz_below((uint32_t)(len - ROCEMU_BTH_BYTES) + 1);
	if (fuzz_chance(3))
		return len + fuzz_below(64);	/* trailing bytes */
	return len;
}

bool fuzz_args(int argc, char **argv, unsigned long *want)
{
	uint64_t seed;

	*want = argc > 4 ? strtoul(argv[4], NULL, 0) : FUZZ_DEFAULT_PACKETS;
	if (argc < 4 || argc > 6 || !*want) {
		fprintf(stderr, "usage: %s DEVICE_A DEVICE_B ROCEMU [PACKETS [SEED]]\n", argv[0]);
		return false;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	seed = argc > 5 ? strtoull(argv[5], NULL, 0) : 1;
	fuzz_seed(seed);
	printf("seed %" PRIu64 ", %lu packets\n", seed, *want);
	cli_use(argv[3]);
	return true;
}

void fuzz_run(const char *first, const char *second, unsigned long want,
	      const struct fuzz_source *src)
{
	unsigned long sent = 0, next_count = COUNT_EVERY;
	long long base, got = 0;
	struct fuzz_packet p;
	struct timespec start;

	base = cli_packets_from_outside(first, second);
	if (base < 0)
		return;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		if (!src->service())
			return;
		for (unsigned int i = 0; i < src->batch; i++, sent++) {
			src->next(&p);
			if (!forge_send(p.from, p.dst, p.data, p.len))
				return;
		}
		if (sent < next_count)
			continue;
		next_count = sent + COUNT_EVERY;
		got = cli_packets_from_outside(first, second);
		if (got < 0)
			return;
		got -= base;
		printf("%lu sent, %lld received, %ld ms\n", sent, got, elapsed_ms(&start));
		if (!cli_status_answers("during the fuzz"))
			return;
		if ((unsigned long long)got >= want)
			break;
		if (elapsed_ms(&start) > TIME_LIMIT_MS) {
			check(false, "only %lld of %lu fuzz packets reached the daemon in %d s", got,
			      want, TIME_LIMIT_MS / 1000);
			return;
		}
	}
	check(true, "%lld fuzz packets reached the daemon (%lu sent, %ld ms)", got, sent,
	      elapsed_ms(&start));
}
