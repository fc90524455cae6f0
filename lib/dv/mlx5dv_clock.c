/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The device clock as mlx5 exposes it (include/rocemu/clock.h): the raw
 * cycle count (ibv_query_rt_values_ex), and the clock info page that
 * turns CQE timestamps into wall-clock ns (mlx5dv_get_clock_info, read
 * by mlx5dv_ts_to_ns). The kernel rewrites its page every overflow
 * period; here each read computes it afresh, so it is never stale.
 */
#include "lib/shim.h"
#include "lib/dv/dv.h"

#include "rocemu/clock.h"

void rocemu_clock_info(struct mlx5dv_clock_info *info)
{
	uint64_t mono = 0, real = 0, gap = UINT64_MAX, cycles;

	/*
	 * Wall clock minus monotonic, taken between two monotonic reads: the
	 * tightest pair of a few, as a preemption between them would shift
	 * every converted timestamp by half its length.
	 */
	for (int i = 0; i < 4 && gap > 1000; i++) {
		struct timespec m0, r, m1;
		uint64_t g;

		clock_gettime(CLOCK_MONOTONIC, &m0);
		clock_gettime(CLOCK_REALTIME, &r);
		clock_gettime(CLOCK_MONOTONIC, &m1);
		g = rocemu_timespec_ns(&m1) - rocemu_timespec_ns(&m0);
		if (g < gap) {
			gap = g;
			mono = rocemu_timespec_ns(&m0) / 2 + rocemu_timespec_ns(&m1) / 2;
			real = rocemu_timespec_ns(&r);
		}
	}
	cycles = rocemu_clock_cycles_at(mono);
	info->last_cycles = cycles & ROCEMU_CLOCK_MASK;
	info->nsec = rocemu_clock_ns_of(cycles) + (real - mono);
	info->frac = 0;
	info->mult = ROCEMU_CLOCK_MULT;
	info->shift = ROCEMU_CLOCK_SHIFT;
	info->mask = ROCEMU_CLOCK_MASK;
}

uint64_t rocemu_clock_info_update_nsec(void)
{
	/* The kernel's overflow period: delta * mult must stay within 63 bits. */
	return rocemu_clock_ns_of((ROCEMU_CLOCK_MASK / ROCEMU_CLOCK_MULT));
}

int mlx5dv_get_clock_info(struct ibv_context *context, struct mlx5dv_clock_info *clock_info)
{
	if (!rocemu_ctx_is_ours(context))
		return REAL(mlx5dv_get_clock_info)(context, clock_info);
	if (!rocemu_dv_plays(context->device, ROCEMU_MODEL_CX5))
		return EOPNOTSUPP;
	rocemu_clock_info(clock_info);
	return 0;
}

int rocemu_query_rt_values_op(struct ibv_context *context, struct ibv_values_ex *values)
{
	(void)context;
	if (values->comp_mask & ~(uint32_t)IBV_VALUES_MASK_RAW_CLOCK)
		return EINVAL;
	/* mlx5 puts the cycle count in tv_nsec. */
	if (values->comp_mask & IBV_VALUES_MASK_RAW_CLOCK) {
		values->raw_clock.tv_sec = 0;
		values->raw_clock.tv_nsec = (long)rocemu_clock_now();
	}
	return 0;
}
