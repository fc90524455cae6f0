/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The mlx4 ring format (a ConnectX-3 Pro's): the table a device of model cx3 points at. */
#include "emulator/mlx4/format.h"

#include <stddef.h>
#include <infiniband/mlx4dv.h>
#include <infiniband/mlx5dv.h>

#include "emulator/mlx4/cqe.h"
#include "emulator/mlx4/wqe.h"
#include "emulator/mlx5/wqe.h"
#include "rocemu/ring_mlx4.h"

/* Receive and SRQ WQEs and doorbell records are mlx5's byte for byte: mlx5/wqe.c reads both. */
_Static_assert((int)MLX4_INVALID_LKEY == (int)MLX5_INVALID_LKEY, "receive terminator");
_Static_assert(sizeof(struct mlx4_wqe_data_seg) == sizeof(struct mlx5_wqe_data_seg) &&
	       offsetof(struct mlx4_wqe_data_seg, lkey) == offsetof(struct mlx5_wqe_data_seg, lkey) &&
	       offsetof(struct mlx4_wqe_data_seg, addr) == offsetof(struct mlx5_wqe_data_seg, addr),
	       "receive data segment");
_Static_assert(sizeof(struct mlx4_wqe_srq_next_seg) == sizeof(struct mlx5_wqe_srq_next_seg) &&
	       offsetof(struct mlx4_wqe_srq_next_seg, next_wqe_index) ==
	       offsetof(struct mlx5_wqe_srq_next_seg, next_wqe_index),
	       "SRQ link");

const struct rocemu_ring_format rocemu_ring_mlx4 = {
	.name = "mlx4",
	.wq_size = rocemu_mlx4_wq_size,
	.wq_caps = rocemu_mlx4_wq_caps,
	.bf_size = ROCEMU_MLX4_DOORBELL_PAGES,
	.wqe_ops = rocemu_mlx4_wqe_ops,
	.sq_posted = rocemu_mlx4_sq_posted,
	.sq_doorbell = rocemu_mlx4_sq_doorbell,
	.parse_send = rocemu_mlx4_parse_send,
	.peek_dc = rocemu_mlx4_peek_dc,
	.rq_posted = rocemu_wqe_rq_posted,
	.parse_recv = rocemu_wqe_parse_recv,
	.srq_posted = rocemu_wqe_srq_posted,
	.parse_srq = rocemu_wqe_parse_srq,
	.doorbell_written = rocemu_wqe_doorbell_written,
	.doorbell_reset = rocemu_mlx4_doorbell_reset,
	.direct_rung = rocemu_mlx4_direct_rung,
	.cqe_write = rocemu_mlx4_cqe_write,
	.cq_arm_check = rocemu_mlx4_cqe_arm_check,
	.cqe_size_valid = rocemu_mlx4_cqe_size_valid,
	.cqe_size_default = ROCEMU_MLX4_CQE_SIZE_DEFAULT,
	.cq_ring_start = rocemu_mlx4_cqe_ring_start,
	.cq_ring_move = rocemu_mlx4_cqe_ring_move,
};
