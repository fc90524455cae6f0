/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The device's free-running core clock, read alike by the daemon (the
 * timestamp it writes into every CQE) and the shim (raw clock, clock info
 * page). It ticks at a ConnectX-5's hca_core_clock, 156.25 MHz, and counts
 * CLOCK_MONOTONIC, which both processes share: cycles = ns * kHz / 10^6.
 * The clock info page maps cycles to wall-clock ns as the kernel's mlx5
 * timecounter does (mult, shift), for mlx5dv_ts_to_ns.
 */
#ifndef ROCEMU_CLOCK_H
#define ROCEMU_CLOCK_H

#include <stdint.h>
#include <time.h>

#define ROCEMU_CLOCK_KHZ 156250u
/* completion_timestamp_mask: the width a ConnectX's timestamps have (63 bits). */
#define ROCEMU_CLOCK_MASK 0x7fffffffffffffffull
/* The clock info page's cycles-to-ns scale: ns = cycles * mult >> shift (mlx5's shift). */
#define ROCEMU_CLOCK_SHIFT 23u
#define ROCEMU_CLOCK_MULT ((uint32_t)((1000000ull << ROCEMU_CLOCK_SHIFT) / ROCEMU_CLOCK_KHZ))

#define ROCEMU_NSEC_PER_MSEC 1000000ull

static inline uint64_t rocemu_timespec_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000ull + (uint64_t)ts->tv_nsec;
}

/* The cycle count at monotonic time ns (exact floor, no overflow). */
static inline uint64_t rocemu_clock_cycles_at(uint64_t ns)
{
	return ns / ROCEMU_NSEC_PER_MSEC * ROCEMU_CLOCK_KHZ +
	       ns % ROCEMU_NSEC_PER_MSEC * ROCEMU_CLOCK_KHZ / ROCEMU_NSEC_PER_MSEC;
}

/* The monotonic time (ns, floor) at which the counter reached cycles. */
static inline uint64_t rocemu_clock_ns_of(uint64_t cycles)
{
	return cycles / ROCEMU_CLOCK_KHZ * ROCEMU_NSEC_PER_MSEC +
	       cycles % ROCEMU_CLOCK_KHZ * ROCEMU_NSEC_PER_MSEC / ROCEMU_CLOCK_KHZ;
}

/* The device clock now, in cycles. */
static inline uint64_t rocemu_clock_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return rocemu_clock_cycles_at(rocemu_timespec_ns(&ts)) & ROCEMU_CLOCK_MASK;
}

#endif /* ROCEMU_CLOCK_H */
