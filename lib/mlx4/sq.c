/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * A ConnectX-3's send queue between posts (include/rocemu/ring_mlx4.h):
 * every entry starts owned by the device's previous pass, and the entry
 * sq_spare ahead of each post is stamped, as libmlx4 keeps them.
 */
#include "lib/shim.h"

#define STAMP_STEP (MLX4_INLINE_ALIGN / sizeof(uint32_t))

struct mlx4_wqe_ctrl_seg *rocemu_mlx4_sq_wqe(const struct rocemu_sq *sq, uint32_t i)
{
	return (struct mlx4_wqe_ctrl_seg *)(sq->buf +
					    ((size_t)(i & (sq->wqe_cnt - 1)) << sq->wqe_shift));
}

void rocemu_mlx4_sq_stamp(const struct rocemu_sq *sq, uint32_t i)
{
	struct mlx4_wqe_ctrl_seg *ctrl = rocemu_mlx4_sq_wqe(sq, i);
	uint32_t *words = (uint32_t *)ctrl;
	/* The size its ctrl last said, in 32-bit words (libmlx4 stamp_send_wqe). */
	uint32_t ds = (uint32_t)(ctrl->fence_size & ROCEMU_MLX4_WQE_MAX_DS) * 4;

	for (uint32_t w = STAMP_STEP; w < ds; w += STAMP_STEP)
		words[w] = ROCEMU_MLX4_WQE_STAMP;
}

void rocemu_mlx4_sq_init(struct rocemu_qp *qp)
{
	struct rocemu_sq *sq = &qp->sq;

	sq->spare = sq->wqe_cnt - qp->cap.max_send_wr;
	for (uint32_t i = 0; i < sq->wqe_cnt; i++) {
		struct mlx4_wqe_ctrl_seg *ctrl = rocemu_mlx4_sq_wqe(sq, i);

		ctrl->owner_opcode = htobe32(ROCEMU_MLX4_WQE_OWNER);
		ctrl->fence_size = (uint8_t)(1u << (sq->wqe_shift - 4));
		rocemu_mlx4_sq_stamp(sq, i);
	}
}
