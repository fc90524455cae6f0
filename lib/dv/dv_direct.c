/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * What mlx5dv_init_obj and mlx4dv_init_obj share: the daemon is told of
 * each QP and CQ handed out, since the program will ring their doorbells
 * without the shim (emulator/sched/direct.c), and a CQ's doorbell
 * register is a page nobody reads.
 */
#include "lib/shim.h"
#include "lib/dv/dv.h"

uint64_t rocemu_dv_cq_uar_sink[4096 / sizeof(uint64_t)] __attribute__((aligned(4096)));

int rocemu_dv_direct_doorbells(struct ibv_context *context, bool *told,
			       enum rocemu_direct_kind kind, uint32_t handle)
{
	struct rocemu_direct_doorbells_req req = { .kind = kind, .handle = handle };
	int err;

	if (__atomic_load_n(told, __ATOMIC_ACQUIRE))
		return 0;
	err = rocemu_conn_call(&to_rctx(context)->conn, ROCEMU_OP_DIRECT_DOORBELLS, &req, NULL,
			       NULL, 0);
	if (err)
		return -err;
	__atomic_store_n(told, true, __ATOMIC_RELEASE);
	return 0;
}
