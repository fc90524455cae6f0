/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/mlx4/cqe.h"

#include <errno.h>
#include <string.h>

#include "emulator/base/idtable.h"
#include "emulator/core/client.h"
#include "emulator/core/emu.h"
#include "emulator/obj/cq.h"
#include "emulator/cqev/cq_event.h"
#include "emulator/obj/srq.h"
#include "rocemu/ring_mlx4.h"

/* libmlx4's GRH flag of a UD receive, bit 31 of g_mlpath_rqpn. */
#define CQE_GRH 0x80000000u

static struct rocemu_cq_arm cq_arm(const struct rocemu_cq *cq)
{
	uint32_t arm = rocemu_cq_dbrec_read(cq, ROCEMU_CQ_DBR_ARM);

	return (struct rocemu_cq_arm){ .sn = (uint8_t)rocemu_cq_arm_sn(arm),
				       .armed = rocemu_mlx4_cq_armed(arm),
				       .all = rocemu_mlx4_cq_arm_all(arm),
				       .ci = rocemu_cq_arm_ci(arm) };
}

void rocemu_mlx4_cqe_arm_check(struct rocemu_cq *cq)
{
	rocemu_cq_event_arm_check(cq, cq_arm(cq));
}

bool rocemu_mlx4_cqe_size_valid(uint32_t size)
{
	return size == ROCEMU_MLX4_CQE_SIZE || size == 2 * ROCEMU_MLX4_CQE_SIZE;
}

/* Hardware's: the owner bit of the pass before index's. */
static void cqe_to_hardware(void *ring, uint32_t cqe_size, uint32_t ncqe, uint32_t index)
{
	rocemu_mlx4_cqe_at(ring, cqe_size, ncqe, index)->owner_sr_opcode =
		rocemu_mlx4_cqe_owner_sr_opcode(0, false, index + ncqe, ncqe);
}

uint32_t rocemu_mlx4_cqe_ring_start(void *ring, uint32_t cqe_size, uint32_t ncqe, uint32_t pi,
				    uint32_t written)
{
	/* libmlx4 and mlx4dv pollers trust the owner bit alone: every entry must say hardware's. */
	for (uint32_t i = pi; i != pi + ncqe - written; i++)
		cqe_to_hardware(ring, cqe_size, ncqe, i);
	return 0;
}

int rocemu_mlx4_cqe_ring_move(const struct rocemu_cq *cq, void *to, uint32_t to_ncqe,
			      void *to_dbrec)
{
	__be32 *dbrec = to_dbrec;
	uint32_t ci = rocemu_cq_dbrec_read(cq, ROCEMU_CQ_DBR_SET_CI);
	uint32_t n = (cq->pi - ci) & ROCEMU_CQ_INDEX_MASK, size = cq->layout.cqe_size;

	/* The unpolled CQEs must fit, one slot kept free. */
	if (n > cq->layout.ncqe || n >= to_ncqe)
		return -EINVAL;
	for (uint32_t i = ci; i != ci + n; i++) {
		struct mlx4_cqe *src = rocemu_mlx4_cqe_at(cq->ring.addr, size, cq->layout.ncqe, i);
		struct mlx4_cqe *cqe = rocemu_mlx4_cqe_at(to, size, to_ncqe, i);

		memcpy(cqe, src, sizeof(*cqe));
		cqe->owner_sr_opcode = (uint8_t)((src->owner_sr_opcode & ~MLX4_CQE_OWNER_MASK) |
						 (i & to_ncqe ? MLX4_CQE_OWNER_MASK : 0));
	}
	dbrec[ROCEMU_CQ_DBR_SET_CI] = htobe32(ci);
	dbrec[ROCEMU_CQ_DBR_ARM] = htobe32(rocemu_cq_dbrec_read(cq, ROCEMU_CQ_DBR_ARM));
	return (int)rocemu_mlx4_cqe_ring_start(to, size, to_ncqe, cq->pi, n);
}

/* The CQE opcode of each kind of completion: a send's is its WQE's. */
static const uint8_t recv_opcode[] = {
	[ROCEMU_CQE_RECV_SEND] = MLX4_RECV_OPCODE_SEND,
	[ROCEMU_CQE_RECV_SEND_IMM] = MLX4_RECV_OPCODE_SEND_IMM,
	[ROCEMU_CQE_RECV_SEND_INV] = MLX4_RECV_OPCODE_SEND_INVAL,
	[ROCEMU_CQE_RECV_WRITE_IMM] = MLX4_RECV_OPCODE_RDMA_WRITE_IMM,
};

static uint8_t cqe_opcode(const struct rocemu_cqe_info *info)
{
	if (rocemu_cqe_kind_error(info->kind))
		return MLX4_CQE_OPCODE_ERROR;
	return info->kind == ROCEMU_CQE_SEND_DONE ? info->wqe_opcode : recv_opcode[info->kind];
}

/* A receive from an XRC SRQ: libmlx4 finds it by the SRQ, not by the QP (ring_mlx4.h). */
static bool xrc_srq_recv(const struct rocemu_cq *cq, const struct rocemu_cqe_info *info)
{
	const struct rocemu_srq *srq;

	if (info->kind == ROCEMU_CQE_SEND_DONE || info->kind == ROCEMU_CQE_SEND_ERR || !info->srqn)
		return false;
	srq = rocemu_idtable_get(&cq->owner->emu->srqs, info->srqn);
	return srq && srq->xrcd_open;
}

static void fill_cqe(struct mlx4_cqe *cqe, const struct rocemu_cq *cq,
		     const struct rocemu_cqe_info *info, uint8_t syndrome)
{
	struct mlx4_err_cqe *err = (struct mlx4_err_cqe *)cqe;

	memset(cqe, 0, offsetof(struct mlx4_cqe, owner_sr_opcode));
	cqe->vlan_my_qpn = htobe32(info->qpn & MLX4_CQE_QPN_MASK);
	cqe->wqe_index = htobe16(info->wqe_counter);
	if (xrc_srq_recv(cq, info)) {
		cqe->vlan_my_qpn |= htobe32(ROCEMU_MLX4_XRC_QPN_BIT);
		cqe->g_mlpath_rqpn = htobe32(info->srqn & MLX4_CQE_QPN_MASK);
	}
	if (rocemu_cqe_kind_error(info->kind)) {
		err->syndrome = syndrome;
		return;
	}
	cqe->byte_cnt = htobe32(info->byte_cnt);
	if (info->kind == ROCEMU_CQE_SEND_DONE)
		return;
	cqe->immed_rss_invalid = info->imm;
	if (!cqe->g_mlpath_rqpn)
		cqe->g_mlpath_rqpn = htobe32((info->grh_ipv4 ? CQE_GRH : 0) |
					     (info->src_qp & MLX4_CQE_QPN_MASK));
}

bool rocemu_mlx4_cqe_write(struct rocemu_cq *cq, const struct rocemu_cqe_info *info)
{
	uint32_t ncqe = cq->layout.ncqe, ci = rocemu_cq_dbrec_read(cq, ROCEMU_CQ_DBR_SET_CI);
	bool error = rocemu_cqe_kind_error(info->kind);
	bool is_send = info->kind == ROCEMU_CQE_SEND_DONE || info->kind == ROCEMU_CQE_SEND_ERR;
	uint8_t op = cqe_opcode(info);
	uint8_t syndrome = error ? rocemu_mlx4_cqe_syndrome_of(info->status) : 0;
	struct mlx4_cqe *cqe;

	if (!rocemu_cq_room(cq, ci, info->qpn))
		return false;
	cqe = rocemu_mlx4_cqe_at(cq->ring.addr, cq->layout.cqe_size, ncqe, cq->pi);
	fill_cqe(cqe, cq, info, syndrome);
	/* Release: every field is visible before the owner bit hands the CQE over. */
	__atomic_store_n(&cqe->owner_sr_opcode,
			 rocemu_mlx4_cqe_owner_sr_opcode(op, is_send, cq->pi, ncqe), __ATOMIC_RELEASE);
	rocemu_cq_written(cq, info, op, syndrome, cq_arm);
	return true;
}
