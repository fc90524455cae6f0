/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The mlx5 ring format (a ConnectX-5's): the table every device points at today. */
#include "emulator/mlx5/format.h"

#include <infiniband/mlx5dv.h>

#include "emulator/mlx5/cqe.h"
#include "emulator/mlx5/wqe.h"
#include "emulator/obj/qp_layout.h"

/* mlx5 has no inline receive: a receive WQE is its SGEs. */
static int mlx5_wq_size(const struct ibv_qp_cap *want, enum ibv_qp_type type,
			uint32_t max_tso_header, uint32_t inl_recv_sz, struct rocemu_wq_sizes *sizes)
{
	(void)inl_recv_sz;
	return rocemu_wq_size(want, type, max_tso_header, sizes);
}

/* mlx5's doorbell record says where posted BBs end, whatever the consumer. */
static uint16_t mlx5_sq_doorbell(const struct rocemu_qp *qp, uint32_t bb)
{
	(void)bb;
	return rocemu_wqe_sq_doorbell(qp);
}

const struct rocemu_ring_format rocemu_ring_mlx5 = {
	.name = "mlx5",
	.wq_size = mlx5_wq_size,
	.wq_caps = rocemu_wq_caps,
	.bf_size = ROCEMU_BF_SIZE,
	.wqe_ops = rocemu_wqe_ops,
	.sq_posted = rocemu_wqe_sq_posted,
	.sq_doorbell = mlx5_sq_doorbell,
	.parse_send = rocemu_wqe_parse_send,
	.peek_dc = rocemu_wqe_peek_dc,
	.rq_posted = rocemu_wqe_rq_posted,
	.parse_recv = rocemu_wqe_parse_recv,
	.srq_posted = rocemu_wqe_srq_posted,
	.parse_srq = rocemu_wqe_parse_srq,
	.doorbell_written = rocemu_wqe_doorbell_written,
	.doorbell_reset = rocemu_wqe_doorbell_reset,
	.direct_rung = rocemu_wqe_direct_rung,
	.cqe_write = rocemu_cqe_write,
	.cq_arm_check = rocemu_cqe_arm_check,
	.cqe_size_valid = rocemu_cqe_size_valid,
	.cqe_size_default = sizeof(struct mlx5_cqe64),
	.cq_ring_start = rocemu_cqe_ring_start,
	.cq_ring_move = rocemu_cqe_ring_move,
};
