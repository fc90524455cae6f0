/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The shared-ring contract of a ConnectX-3 device (ROCEMU_DEVICES
 * name=ip@cx3), beside ring.h's of a ConnectX-5: the formats are those of
 * <infiniband/mlx4dv.h>, the sizes and indices libmlx4's and mlx4_ib's.
 *
 *  index                 owner (writes)  published as                      RESET
 *  SQ head (WQEs)        shim poster     the owner bit of each WQE's ctrl:  0
 *                                        bit 31 of owner_opcode set on odd
 *                                        passes (head & wqe_cnt), written
 *                                        last (release); the send doorbell
 *                                        register only says "look"
 *  SQ tail (WQEs)        shim poller     - (from CQE wqe_index, 16 bits)    0
 *  SQ fetch (WQEs)       daemon          CQE wqe_index of the WQE, 16       0
 *  RQ head (WQEs)        shim poster     the RQ doorbell record, low 16     0
 *  SRQ counter (WQEs)    shim poster     the SRQ doorbell record, low 16    -
 *  CQ consumer index     shim poller     set_ci_db, 24 bits                 -
 *  CQ producer index     daemon          CQE owner bit (0x80 of            -
 *                                        owner_sr_opcode): pi & ncqe
 *  CQ arm sequence       shim (+1/event) arm_db bits 28-29                  -
 *
 * A send WQE takes one stride of 1 << sq_wqe_shift bytes (at least 64),
 * whatever its size; its ctrl's fence_size says its 16-byte units. Every
 * ctrl starts with the owner bit set (mlx4_qp_init_sq_ownership), so no
 * WQE is valid on the first pass until posted. The ring keeps sq_spare
 * WQEs of headroom (2 KiB and one WQE) that are never posted into; the
 * poster stamps the WQE sq_spare ahead (0xffffffff in the first word of
 * every 64 bytes after the first), which the device never reads since its
 * owner bit is stale. Inline data comes in segments that never cross a
 * 64-byte boundary of the WQE. A CQ starts with every CQE's owner bit set,
 * as the firmware leaves it (hardware's on the first pass).
 *
 * Receive WQEs (RQ and SRQ) are data segments, the last followed by one
 * of lkey MLX4_INVALID_LKEY when fewer than the stride holds; an SRQ WQE
 * starts with struct mlx4_wqe_srq_next_seg and links like mlx5's (ring.h).
 */
#ifndef ROCEMU_RING_MLX4_H
#define ROCEMU_RING_MLX4_H

#include <endian.h>
#include <stdbool.h>
#include <stdint.h>
#include <infiniband/verbs.h>
#include <infiniband/mlx4dv.h>

#include "rocemu/ring.h"

#pragma GCC visibility push(hidden)

enum {
	ROCEMU_MLX4_SQ_MIN_SHIFT = 6,		/* a 64-byte stride at least */
	ROCEMU_MLX4_SQ_MAX_SHIFT = 10,		/* max_sq_desc_sz 1008, rounded up */
	ROCEMU_MLX4_WQE_MAX_DS = 0x3f,		/* fence_size's units of 16 bytes */
	ROCEMU_MLX4_SQ_HEADROOM = 2048,		/* bytes the device may prefetch */
	ROCEMU_MLX4_RQ_MIN_SHIFT = 4,
	ROCEMU_MLX4_CQE_SIZE = 32,		/* struct mlx4_cqe; 64-byte entries end in one */
	ROCEMU_MLX4_CQE_SIZE_DEFAULT = 64,	/* a ConnectX-3 Pro with mlx4_core's enable_64b_cqe_eqe */
	ROCEMU_MLX4_OPCODE_MASK = 0x1f,		/* owner_opcode's low bits */
	ROCEMU_MLX4_UAR_SIZE = 4096,		/* the UAR page: send doorbell at MLX4_SEND_DOORBELL */
	ROCEMU_MLX4_DOORBELL_PAGES = 2 * ROCEMU_MLX4_UAR_SIZE,	/* a QP's UAR page, then its BlueFlame page */
};

#define ROCEMU_MLX4_WQE_OWNER 0x80000000u	/* owner_opcode: the WQE is posted on an odd pass */
#define ROCEMU_MLX4_WQE_STAMP 0xffffffffu

/* ---- send WQEs ---- */

/* By MLX4_OPCODE_*; flags 0: not a WQE of this device. */
extern const struct rocemu_wqe_op rocemu_mlx4_wqe_ops[256];

/* The MLX4_OPCODE_* a work request is posted as (mlx4_ib_opcode), or -1. */
int rocemu_mlx4_opcode_of_wr(enum ibv_wr_opcode wr_opcode);

/* owner_opcode of a WQE posted at free-running index i of a ring of wqe_cnt: owner bit and opcode. */
static inline uint32_t rocemu_mlx4_owner_opcode(uint8_t opcode, uint32_t i, uint32_t wqe_cnt)
{
	return (i & wqe_cnt ? ROCEMU_MLX4_WQE_OWNER : 0) | opcode;
}

/* The WQE at free-running index i (owner_opcode read with acquire) is posted. */
static inline bool rocemu_mlx4_wqe_posted(uint32_t owner_opcode, uint32_t i, uint32_t wqe_cnt)
{
	return !(owner_opcode & ROCEMU_MLX4_WQE_OWNER) == !(i & wqe_cnt);
}

/* An XRC send's remote SRQ number in srcrb_flags (libmlx4 MLX4_REMOTE_SRQN_FLAGS). */
static inline uint32_t rocemu_mlx4_xrc_srqn(__be32 srcrb_flags)
{
	return be32toh(srcrb_flags) >> 8;
}

/*
 * The RoCEv2 UDP source port of a UD send through av, as mlx5's AV gives
 * it: from the flow label (sl_tclass_flowlabel's low 20 bits) as
 * ibv_flow_label_to_udp_sport maps it; without one, the port the shim
 * picked for the address handle, which it keeps in dlid (unused on RoCE)
 * as it keeps it in mlx5's rlid; 0 there is the map's port of label 0.
 */
static inline uint16_t rocemu_mlx4_av_udp_sport(const struct mlx4_av *av)
{
	uint32_t flow_label = be32toh(av->sl_tclass_flowlabel) & 0xfffff;

	return !flow_label && av->dlid ? be16toh(av->dlid) : ibv_flow_label_to_udp_sport(flow_label);
}

/* ---- ring sizing (libmlx4 mlx4_calc_sq_wqe_size, mlx4_set_sq_sizes; mlx4_ib set_rq_size) ---- */

/*
 * Rings for want: sq_wqe_shift from the largest WQE, sq_spare WQEs of
 * headroom, sq_bbs = WQEs in the ring (sq_wqe_bbs 1), the RQ as mlx5's
 * (ring.h) with a stride of at least inl_recv_sz bytes (mlx4dv_create_qp).
 * An XRC receive QP has no SQ. Returns 0, or -EINVAL for a WQE past 1008
 * bytes or a ring past its counters.
 */
int rocemu_mlx4_wq_size(const struct ibv_qp_cap *want, enum ibv_qp_type type,
			uint32_t max_tso_header, uint32_t inl_recv_sz,
			struct rocemu_wq_sizes *sizes);

/* What rings of these sizes hold (mlx4_set_sq_sizes), before device limits clamp it. */
void rocemu_mlx4_wq_caps(const struct rocemu_wq_sizes *sizes, enum ibv_qp_type type,
			 struct ibv_qp_cap *cap);

/* ---- completions ---- */

/* By CQE opcode of a receive (MLX4_RECV_OPCODE_*) and of an error (MLX4_CQE_OPCODE_ERROR). */
extern const struct rocemu_cqe_op rocemu_mlx4_recv_cqe_ops[32];

/* The work completion status of an error CQE's syndrome (libmlx4 mlx4_handle_error_cqe). */
enum ibv_wc_status rocemu_mlx4_cqe_error_status(uint8_t syndrome);
/* The other way: a status no syndrome has is a local QP operation error. */
uint8_t rocemu_mlx4_cqe_syndrome_of(enum ibv_wc_status status);

/*
 * The struct mlx4_cqe at free-running index i of a ring of ncqe entries of
 * cqe_size bytes (32 or 64): a 64-byte entry carries it in its second half.
 */
static inline struct mlx4_cqe *rocemu_mlx4_cqe_at(void *ring, uint32_t cqe_size, uint32_t ncqe,
						  uint32_t i)
{
	return (struct mlx4_cqe *)((uint8_t *)ring + (size_t)(i & (ncqe - 1)) * cqe_size +
				   cqe_size - sizeof(struct mlx4_cqe));
}

/* owner_sr_opcode of a CQE written at producer index pi of a ring of ncqe: owner bit last. */
static inline uint8_t rocemu_mlx4_cqe_owner_sr_opcode(uint8_t opcode, bool is_send, uint32_t pi,
						      uint32_t ncqe)
{
	return (uint8_t)((pi & ncqe ? MLX4_CQE_OWNER_MASK : 0) |
			 (is_send ? MLX4_CQE_IS_SEND_MASK : 0) | (opcode & MLX4_CQE_OPCODE_MASK));
}

/* The CQE at consumer index ci (owner_sr_opcode read with acquire) is software's (libmlx4 get_sw_cqe). */
static inline bool rocemu_mlx4_cqe_ready(uint8_t owner_sr_opcode, uint32_t ci, uint32_t ncqe)
{
	return !(owner_sr_opcode & MLX4_CQE_OWNER_MASK) == !(ci & ncqe);
}

/* vlan_my_qpn's QP; g_mlpath_rqpn's source QP (and GRH bit 31). */
static inline uint32_t rocemu_mlx4_cqe_qpn(const struct mlx4_cqe *cqe)
{
	return be32toh(cqe->vlan_my_qpn) & MLX4_CQE_QPN_MASK;
}

/*
 * A receive CQE of an XRC SRQ's WQE has MLX4_XRC_QPN_BIT in vlan_my_qpn's
 * QPN and the SRQ's number in g_mlpath_rqpn, where libmlx4 looks for it
 * (the target QP may be another process's); any other SRQ receive is
 * found through its QP, as libmlx4 does.
 */
#define ROCEMU_MLX4_XRC_QPN_BIT (1u << 23)

/* The arm word as mlx4_arm_cq writes it into arm_db: sn << 28 | command | consumer index. */
static inline uint32_t rocemu_mlx4_cq_arm_word(uint32_t sn, bool solicited_only, uint32_t ci)
{
	return (sn & 3) << 28 | (solicited_only ? MLX4_CQ_DB_REQ_NOT_SOL : MLX4_CQ_DB_REQ_NOT) |
	       (ci & ROCEMU_CQ_INDEX_MASK);
}

/* Armed at all (mlx4 has no "not armed" command value 0: 0 means never armed). */
static inline bool rocemu_mlx4_cq_armed(uint32_t arm)
{
	return (arm & ROCEMU_CQ_ARM_CMD_MASK) != 0;
}

static inline bool rocemu_mlx4_cq_arm_all(uint32_t arm)
{
	return (arm & ROCEMU_CQ_ARM_CMD_MASK) == MLX4_CQ_DB_REQ_NOT;
}

#pragma GCC visibility pop

#endif /* ROCEMU_RING_MLX4_H */
