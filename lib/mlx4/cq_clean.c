/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * What rocemu_cq_clean (lib/verbs/cq.c) asks of a ConnectX-3's CQEs when
 * a QP is reset or destroyed, as libmlx4's __mlx4_cq_clean sweeps them.
 */
#include "lib/shim.h"

#include <string.h>

static struct mlx4_cqe *cqe_at(struct rocemu_cq *cq, uint32_t i)
{
	return rocemu_mlx4_cqe_at(cq->buf, cq->cqe_size, cq->ncqe, i);
}

static bool sweep_ready(struct rocemu_cq *cq, uint32_t i)
{
	return rocemu_mlx4_cqe_sw(cq, i) != NULL;
}

/* A ConnectX-3 has no WQ CQEs: wq is never asked for. */
static bool sweep_drop(struct rocemu_cq *cq, uint32_t i, uint32_t qpn, bool wq,
		       struct rocemu_srq *srq)
{
	struct mlx4_cqe *cqe = cqe_at(cq, i);

	(void)wq;
	if (rocemu_mlx4_cqe_qpn(cqe) != qpn)
		return false;
	if (srq && !rocemu_mlx4_cqe_is_send(cqe))
		rocemu_srq_complete(srq, be16toh(cqe->wqe_index));
	return true;
}

/* The struct mlx4_cqe only, as libmlx4 copies it. */
static void sweep_move(struct rocemu_cq *cq, uint32_t from, uint32_t to)
{
	struct mlx4_cqe *cqe = cqe_at(cq, from), *dest = cqe_at(cq, to);
	uint8_t owner = dest->owner_sr_opcode & MLX4_CQE_OWNER_MASK;

	memcpy(dest, cqe, sizeof(*dest));
	dest->owner_sr_opcode = (uint8_t)(owner | (cqe->owner_sr_opcode & ~MLX4_CQE_OWNER_MASK));
}

const struct rocemu_cqe_sweep_ops rocemu_mlx4_cqe_sweep_ops = { sweep_ready, sweep_drop,
								 sweep_move };
