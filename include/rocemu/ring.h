/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The shared-ring contract between the shim (the driver) and the daemon
 * (the hardware), stated once and read by both. Formats are those of
 * <infiniband/mlx5dv.h>; this header adds what mlx5dv.h leaves to the
 * driver and the device: which segments each opcode carries, what it
 * completes as, how big the rings are, and who owns which index.
 *
 * Indices: every counter is a free-running uint32_t masked only when used;
 * the narrower forms below are what crosses the shared memory.
 *
 *  index                 owner (writes)  published as                     RESET
 *  SQ cur_post (BBs)     shim poster     dbrec[MLX5_SND_DBR], low 16 bits  0
 *                                        (release); ctrl wqe index, 16
 *  SQ tail (BBs)         shim poller     - (from CQE wqe_counter, 16 bits) 0
 *  SQ fetch (BBs)        daemon          CQE wqe_counter of the WQE, 16     0
 *  RQ head (WQEs)        shim poster     dbrec[MLX5_RCV_DBR], low 16 bits  0
 *                                        (release)
 *  RQ tail (WQEs)        shim poller     -                                 0
 *  RQ consumer (WQEs)    daemon          CQE wqe_counter, 16 bits          0
 *  SRQ counter (WQEs)    shim poster     SRQ dbrec word, low 16 bits       -
 *                                        (release)
 *  SRQ head, tail        shim poster,    - (indices into the free list)    -
 *                        shim poller
 *  SRQ consumed, next    daemon          CQE wqe_counter: the WQE's index  -
 *  CQ consumer index     shim poller     dbrec[ROCEMU_CQ_DBR_SET_CI], 24   -
 *  CQ producer index     daemon          CQE owner bit (index & ncqe)      -
 *  CQ arm sequence       shim (+1/event) arm word bits 28-29, 2 bits       -
 *
 * Widths must not alias: a 16-bit counter tells a full ring from an empty
 * one only while the ring holds at most 2^15 entries, so an SQ has at
 * most ROCEMU_SQ_MAX_BBS basic blocks (ConnectX's log_max_qp_sz = 15) and
 * an RQ at most ROCEMU_RQ_MAX_WQES entries; a CQ, at most half of what 24
 * bits count. RESET of a QP returns every QP index on both sides to 0 and
 * the daemon zeroes the doorbell record, as mlx5 does on a move to RESET;
 * CQ indices belong to the CQ and survive it; on a resize the daemon
 * copies them into the new ring while the shim's poller is locked out.
 *
 * An SRQ (mlx5 srq.c) is a ring of WQEs, each a struct
 * mlx5_wqe_srq_next_seg and data segments, linked into a free list by
 * next_wqe_index: at creation the shim links i -> i + 1 (mod size), head
 * 0 and tail size - 1; a post fills head and moves head along the link;
 * the device takes WQEs along the same links from index 0, as many as the
 * doorbell counter says; the poller frees the WQE a CQE's wqe_counter
 * names by linking it after tail (mlx5_free_srq_wqe). head == tail is
 * full, so an SRQ of size entries holds size - 1 WQEs (max_wr).
 */
#ifndef ROCEMU_RING_H
#define ROCEMU_RING_H

#include <endian.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>
#include <infiniband/mlx5dv.h>

#include "rocemu/wqe_bind.h"

/* Linked into the preloaded shim too: none of it is exported from there. */
#pragma GCC visibility push(hidden)

/* ---- sizes ---- */

enum {
	ROCEMU_WQE_BB = MLX5_SEND_WQE_BB,			/* SQ basic block */
	ROCEMU_WQE_SEG = sizeof(struct mlx5_wqe_data_seg),	/* the ds unit: 16 bytes */
	ROCEMU_WQE_DS_MASK = 0x3f,				/* ds field of qpn_ds */
	/* The largest WQE ds can describe (63 units), in BBs. */
	ROCEMU_WQE_MAX_BBS = (ROCEMU_WQE_DS_MASK * ROCEMU_WQE_SEG + ROCEMU_WQE_BB - 1) /
			     ROCEMU_WQE_BB,
	ROCEMU_SQ_MAX_BBS = 1 << 15,		/* 16-bit counters, no aliasing */
	ROCEMU_RQ_MAX_WQES = 1 << 15,
	ROCEMU_RQ_MAX_STRIDE = 512,		/* bytes of one receive WQE (mlx5 max_rq_desc_sz) */
	ROCEMU_SRQ_MAX_WQES = 1 << 15,		/* 16-bit doorbell counter and wqe_counter */
	ROCEMU_SRQ_MIN_STRIDE = 32,		/* mlx5_alloc_srq_buf: at least 32 bytes */
	ROCEMU_CQ_INDEX_MASK = 0xffffff,	/* CQ indices in the doorbell record */
};

/* ---- the send WQE opcode table (rxe_opcode.c style): engines test flags ---- */

enum rocemu_wqe_op_flags {
	ROCEMU_WQE_OP_VALID = 1 << 0,	/* this device executes it */
	ROCEMU_WQE_OP_RADDR = 1 << 1,	/* raddr segment: needs the peer's address and rkey */
	ROCEMU_WQE_OP_ATOMIC = 1 << 2,	/* atomic segment: an atomic request */
	ROCEMU_WQE_OP_COMPARE = 1 << 3,	/* the atomic compares before it swaps */
	ROCEMU_WQE_OP_BIND = 1 << 4,	/* rocemu's bind segment (wqe_bind.h) */
	ROCEMU_WQE_OP_DATA = 1 << 5,	/* data segments follow: gather, or scatter of replies */
	ROCEMU_WQE_OP_INLINE = 1 << 6,	/* its data may be inline instead */
	ROCEMU_WQE_OP_READ = 1 << 7,	/* RDMA READ: data comes back */
	ROCEMU_WQE_OP_LOCAL = 1 << 8,	/* done by the local device: no packet, no PSN */
	ROCEMU_WQE_OP_IMM = 1 << 9,	/* ctrl imm is immediate data for the peer */
	ROCEMU_WQE_OP_INV = 1 << 10,	/* ctrl imm is the rkey to invalidate */
	ROCEMU_WQE_OP_UD = 1 << 11,	/* a UD QP may post it (SEND, SEND_IMM) */
	ROCEMU_WQE_OP_ETH = 1 << 12,	/* a RAW_PACKET QP may post it (SEND, TSO) */
	ROCEMU_WQE_OP_TSO = 1 << 13,	/* segmented by the Ethernet segment's mss: RAW_PACKET's alone */
};

/* What a successful requester completion reports as byte_len (mlx5 handle_good_req). */
enum rocemu_wc_len {
	ROCEMU_WC_LEN_NONE,		/* 0 */
	ROCEMU_WC_LEN_CQE,		/* the CQE's byte_cnt: the WQE's length */
	ROCEMU_WC_LEN_ATOMIC,		/* 8, the original value */
};

struct rocemu_wqe_op {
	const char *name;		/* for logs */
	uint16_t flags;			/* ROCEMU_WQE_OP_* */
	uint8_t wc_opcode;		/* enum ibv_wc_opcode of its requester completion */
	uint8_t wc_flags;		/* IBV_WC_WITH_IMM when the completion says so */
	uint8_t wc_len;			/* enum rocemu_wc_len */
};

/* By MLX5_OPCODE_*; flags 0: not a WQE of this device. */
extern const struct rocemu_wqe_op rocemu_wqe_ops[256];

static inline const struct rocemu_wqe_op *rocemu_wqe_op(uint8_t mlx5_opcode)
{
	return &rocemu_wqe_ops[mlx5_opcode];
}

/* READ or atomic: takes a max_rd_atomic credit, its SGEs receive data. */
static inline bool rocemu_wqe_op_rd_atomic(const struct rocemu_wqe_op *op)
{
	return op->flags & (ROCEMU_WQE_OP_READ | ROCEMU_WQE_OP_ATOMIC);
}

/* The MLX5_OPCODE_* a work request is posted as, or -1 for one this device has not. */
int rocemu_wqe_opcode_of_wr(enum ibv_wr_opcode wr_opcode);

/* A format's opcode for wr_opcode by its map of n rows (0: none) and its table ops, or -1. */
int rocemu_wqe_opcode_map(const uint8_t *map, size_t n, const struct rocemu_wqe_op *ops,
			  enum ibv_wr_opcode wr_opcode);

/* Segments (ds units) of ctrl and of what the opcode carries before its data. */
static inline uint32_t rocemu_wqe_op_header_ds(const struct rocemu_wqe_op *op)
{
	return 1 + !!(op->flags & ROCEMU_WQE_OP_RADDR) + !!(op->flags & ROCEMU_WQE_OP_ATOMIC) +
	       (op->flags & ROCEMU_WQE_OP_BIND ? sizeof(struct rocemu_wqe_bind_seg) / ROCEMU_WQE_SEG
					       : 0);
}

/*
 * The XRC segment of an XRC initiator's send WQE, right after ctrl: the
 * SRQ at the target that takes the message. ConnectX's format, which
 * rdma-core keeps in its private providers/mlx5/wqe.h (struct
 * mlx5_wqe_xrc_seg), not in mlx5dv.h.
 */
struct rocemu_wqe_xrc_seg {
	__be32 xrc_srqn;
	uint8_t rsvd[12];
};

/*
 * mlx5 DC QPs (mlx5dv_create_qp; IBV_QPT_DRIVER to the application) are
 * laid out and run by these types, values no verbs QP type takes, as the
 * kernel's mlx5 driver has MLX5_IB_QPT_DCI and _DCT behind IB_QPT_DRIVER.
 */
#define ROCEMU_QPT_DCI ((enum ibv_qp_type)0xf0)
#define ROCEMU_QPT_DCT ((enum ibv_qp_type)0xf1)

/*
 * Segments a QP type puts after ctrl in every send WQE, before the
 * opcode's own (ds units): UD's datagram segment holding the address
 * vector (mlx5 set_datagram_seg), a DCI's the same with the DCT number
 * and DC access key (mlx5_send_wr_set_dc_addr), an XRC initiator's XRC
 * segment holding the remote SRQ number; none for RC and UC.
 */
static inline uint32_t rocemu_wqe_qp_header_ds(enum ibv_qp_type type)
{
	return type == IBV_QPT_UD || type == ROCEMU_QPT_DCI ?
		       sizeof(struct mlx5_wqe_datagram_seg) / ROCEMU_WQE_SEG :
	       type == IBV_QPT_XRC_SEND ? sizeof(struct rocemu_wqe_xrc_seg) / ROCEMU_WQE_SEG :
	       type == IBV_QPT_RAW_PACKET ? sizeof(struct mlx5_wqe_eth_seg) / ROCEMU_WQE_SEG : 0;
}

/*
 * Inline header sizes of a RAW_PACKET send (rdma-core's private wqe.h):
 * without TSO the Ethernet segment holds the frame's first 18 bytes (a
 * ConnectX-5's minimal L2 inline mode, mlx5's eth_min_inline_size); a TSO
 * header has at least 14 (MLX5_ETH_L2_MIN_HEADER_SIZE).
 */
enum {
	ROCEMU_ETH_INLINE_HEADER = 18,	/* MLX5_ETH_L2_INLINE_HEADER_SIZE: MACs and a VLAN tag */
	ROCEMU_ETH_MIN_HEADER = 14,	/* MLX5_ETH_L2_MIN_HEADER_SIZE */
};

/*
 * Where the data segments of a RAW_PACKET WQE begin, in bytes after its
 * Ethernet segment's start, for an inline header of hdr_sz bytes: they run
 * from inline_hdr_start on, padded to 16 bytes (mlx5 set_tso_eth_seg);
 * never before the segment's end, where mlx5's post_send puts them.
 */
static inline uint32_t rocemu_wqe_eth_seg_bytes(uint32_t hdr_sz)
{
	uint32_t start = offsetof(struct mlx5_wqe_eth_seg, inline_hdr_start);
	uint32_t end = (start + hdr_sz + ROCEMU_WQE_SEG - 1) / ROCEMU_WQE_SEG * ROCEMU_WQE_SEG;

	return end > sizeof(struct mlx5_wqe_eth_seg) ? end : sizeof(struct mlx5_wqe_eth_seg);
}

/* The opcode may be posted on a QP of this type (DC has no SEND with invalidate opcode). */
static inline bool rocemu_wqe_op_allowed(const struct rocemu_wqe_op *op, enum ibv_qp_type type)
{
	return (op->flags & ROCEMU_WQE_OP_VALID) &&
	       (type != IBV_QPT_UD || (op->flags & ROCEMU_WQE_OP_UD)) &&
	       (type != IBV_QPT_RAW_PACKET || (op->flags & ROCEMU_WQE_OP_ETH)) &&
	       (type == IBV_QPT_RAW_PACKET || !(op->flags & ROCEMU_WQE_OP_TSO)) &&
	       (type != ROCEMU_QPT_DCI ||
		(op->flags & (ROCEMU_WQE_OP_INV | ROCEMU_WQE_OP_LOCAL)) != ROCEMU_WQE_OP_INV);
}

/* ---- the ctrl segment, as the daemon reads it (the shim writes it with mlx5dv_set_ctrl_seg) ---- */

static inline uint8_t rocemu_wqe_ctrl_opcode(const struct mlx5_wqe_ctrl_seg *ctrl)
{
	return (uint8_t)be32toh(ctrl->opmod_idx_opcode);
}

/* The low 16 bits of the SQ counter of the WQE's first BB. */
static inline uint16_t rocemu_wqe_ctrl_index(const struct mlx5_wqe_ctrl_seg *ctrl)
{
	return (uint16_t)(be32toh(ctrl->opmod_idx_opcode) >> 8);
}

static inline uint32_t rocemu_wqe_ctrl_qpn(const struct mlx5_wqe_ctrl_seg *ctrl)
{
	return be32toh(ctrl->qpn_ds) >> 8;
}

static inline uint32_t rocemu_wqe_ctrl_ds(const struct mlx5_wqe_ctrl_seg *ctrl)
{
	return be32toh(ctrl->qpn_ds) & ROCEMU_WQE_DS_MASK;
}

/* BBs a WQE of ds 16-byte units spans. */
static inline uint32_t rocemu_wqe_ds_bbs(uint32_t ds)
{
	return (ds * ROCEMU_WQE_SEG + ROCEMU_WQE_BB - 1) / ROCEMU_WQE_BB;
}

/* ---- ring sizing (mlx5 calc_sq_size and calc_rq_size, with rocemu's WQE overhead; CQs) ---- */

struct rocemu_wq_sizes {
	uint32_t sq_wqe_bbs;		/* BBs of the largest send WQE (mlx4: 1, a stride) */
	uint32_t sq_bbs;		/* SQ ring: power of two <= ROCEMU_SQ_MAX_BBS; 0: none */
	uint32_t sq_wqe_shift;		/* log2 of a BB: 6 (mlx4: of the WQE stride) */
	uint32_t sq_spare;		/* BBs never posted into (mlx4's prefetch headroom; mlx5: 0) */
	uint32_t rq_wqes;		/* RQ ring: power of two <= ROCEMU_RQ_MAX_WQES; 0: none */
	uint32_t rq_wqe_shift;		/* log2 of the receive WQE stride */
	uint32_t max_tso_header;	/* the room each send WQE keeps for a TSO header */
};

/*
 * BBs of the largest send WQE of a QP of this type with these caps: ctrl
 * and raddr segments (UD: ctrl and datagram segments; XRC: ctrl, XRC and
 * raddr; RAW_PACKET: ctrl, the Ethernet segment and max_tso_header bytes
 * rounded to 16, as mlx5), then max_send_sge data segments or one inline
 * segment of max_inline_data bytes, whichever is larger; at least 1.
 * Every opcode's WQE within the caps fits (atomics carry one SGE).
 */
uint32_t rocemu_sq_wqe_bbs(enum ibv_qp_type type, uint32_t max_send_sge,
			   uint32_t max_inline_data, uint32_t max_tso_header);

/*
 * Rings for want: the SQ holds max_send_wr WQEs of sq_wqe_bbs rounded up
 * to a power of two, the RQ max_recv_wr strides of max(max_recv_sge, 1)
 * data segments, both rounded up. Returns 0, or -EINVAL when a WQE or a
 * ring would pass what its format and counters allow (mlx5: EINVAL too).
 */
int rocemu_wq_size(const struct ibv_qp_cap *want, enum ibv_qp_type type,
		   uint32_t max_tso_header, struct rocemu_wq_sizes *sizes);

/* What rings of these sizes hold, before device limits clamp SGEs and inline bytes. */
void rocemu_wq_caps(const struct rocemu_wq_sizes *sizes, enum ibv_qp_type type,
		    struct ibv_qp_cap *cap);

/*
 * CQEs in a CQ ring for cqe asked: a power of two above cqe (one slot
 * stays free, so the app sees ncqe - 1), at least 2. The caller keeps
 * cqe within max_cqe, so that ncqe stays below half the 24-bit index.
 */
uint32_t rocemu_cq_size(uint32_t cqe);

/* ---- shared receive queues ---- */

struct rocemu_srq_sizes {
	uint32_t wqes;			/* ring entries: a power of two, one more than max_wr */
	uint32_t wqe_shift;		/* log2 of the WQE stride */
};

/*
 * An SRQ for max_wr WQEs of max_sge data segments after the next segment
 * (mlx5_create_srq, mlx5_alloc_srq_buf). Returns 0, or -EINVAL when the
 * stride would pass ROCEMU_RQ_MAX_STRIDE or the ring ROCEMU_SRQ_MAX_WQES.
 */
int rocemu_srq_size(uint32_t max_wr, uint32_t max_sge, struct rocemu_srq_sizes *sizes);

/* What an SRQ of these sizes holds: max_wr and max_sge before device limits clamp it. */
static inline void rocemu_srq_caps(const struct rocemu_srq_sizes *sizes, uint32_t *max_wr,
				   uint32_t *max_sge)
{
	*max_wr = sizes->wqes - 1;
	*max_sge = ((1u << sizes->wqe_shift) - sizeof(struct mlx5_wqe_srq_next_seg)) /
		   ROCEMU_WQE_SEG;
}

/* The doorbell record word of a producer counter (16 bits, big-endian). */
static inline __be32 rocemu_wq_dbrec_word(uint32_t counter)
{
	return htobe32(counter & 0xffff);
}

/* ---- completions ---- */

enum rocemu_cqe_op_flags {
	ROCEMU_CQE_OP_SQ = 1 << 0,	/* completes the send WQE wqe_counter names, and those before */
	ROCEMU_CQE_OP_RQ = 1 << 1,	/* completes the oldest receive WQE */
	ROCEMU_CQE_OP_ERR = 1 << 2,	/* struct mlx5_err_cqe: syndrome and vendor syndrome */
};

struct rocemu_cqe_op {
	const char *name;
	uint8_t flags;			/* ROCEMU_CQE_OP_*; 0: not written by this device */
	uint8_t wc_opcode;		/* receive completions (send ones: the WQE's) */
	uint8_t wc_flags;		/* IBV_WC_WITH_IMM, IBV_WC_WITH_INV */
};

/* By CQE opcode (MLX5_CQE_*, op_own >> 4). */
extern const struct rocemu_cqe_op rocemu_cqe_ops[16];

/* The work completion status of an error CQE's syndrome, as rdma-core's mlx5 maps it. */
enum ibv_wc_status rocemu_cqe_error_status(uint8_t syndrome);
/* The other way, for the daemon's error CQEs: a status no syndrome has is a QP operation error. */
uint8_t rocemu_cqe_syndrome_of(enum ibv_wc_status status);
/* That status in libibverbs' words (ibv_wc_status_str), for the daemon's logs and traces. */
const char *rocemu_cqe_error_text(uint8_t syndrome);

static inline const struct rocemu_cqe_op *rocemu_cqe_op(uint8_t cqe_opcode)
{
	return &rocemu_cqe_ops[cqe_opcode & 0xf];
}

/*
 * The CQE at free-running index i of a ring of ncqe entries of cqe_size
 * bytes (64 or 128): a 128-byte entry carries its struct mlx5_cqe64 in its
 * second half, where mlx5 reads it.
 */
static inline struct mlx5_cqe64 *rocemu_cqe_at(void *ring, uint32_t cqe_size, uint32_t ncqe,
					       uint32_t i)
{
	return (struct mlx5_cqe64 *)((uint8_t *)ring + (size_t)(i & (ncqe - 1)) * cqe_size +
				     cqe_size - sizeof(struct mlx5_cqe64));
}

/* op_own bits of a CQE that carries its data (scatter to CQE): kept when a CQE moves. */
#define ROCEMU_CQE_SCATTER_MASK (MLX5_INLINE_SCATTER_32 | MLX5_INLINE_SCATTER_64)

/* op_own of a CQE written at producer index pi of a ring of ncqe: owner bit last. */
static inline uint8_t rocemu_cqe_op_own(uint8_t cqe_opcode, uint32_t pi, uint32_t ncqe)
{
	return (uint8_t)(cqe_opcode << 4 | !!(pi & ncqe));
}

/* The CQE at consumer index ci (op_own read with acquire) is software's to parse. */
static inline bool rocemu_cqe_ready(uint8_t op_own, uint32_t ci, uint32_t ncqe)
{
	return op_own >> 4 != MLX5_CQE_INVALID &&
	       (op_own & MLX5_CQE_OWNER_MASK) == !!(ci & ncqe);
}

/*
 * A RAW_PACKET QP's receive CQE is an Ethernet RQ's (emulator/mlx5/cqe.c):
 * hds_ip_ext has MLX5_CQE_L2_OK, which no other CQE of this device has,
 * with MLX5_CQE_L3_OK and MLX5_CQE_L4_OK; l4_hdr_type_etc the L3 header
 * type in bits 3:2 (MLX5_CQE_L3_HDR_TYPE_*) and a stripped VLAN in bit 0,
 * whose TCI is vlan_info; sop_drop_qpn the steering rule's flow tag, so
 * flags_rqpn names the QP (a frame has no source QP).
 */
#define ROCEMU_CQE_VLAN_STRIPPED 0x1
#define ROCEMU_CQE_FLOW_TAG_MASK 0xffffff

/* Data scattered to a 64-byte CQE fills its first 32 bytes, hds_ip_ext too: such a CQE is no frame's. */
static inline bool rocemu_cqe_is_eth(const struct mlx5_cqe64 *cqe)
{
	return !(cqe->op_own & ROCEMU_CQE_SCATTER_MASK) && (cqe->hds_ip_ext & MLX5_CQE_L2_OK);
}

/* The flow tag as mlx5's ibv_wc_read_flow_tag reads it. */
static inline uint32_t rocemu_cqe_flow_tag(const struct mlx5_cqe64 *cqe)
{
	return be32toh(cqe->sop_drop_qpn) & ROCEMU_CQE_FLOW_TAG_MASK;
}

/* mlx5's get_cqe_l3_hdr_type. */
static inline uint8_t rocemu_cqe_l3_hdr_type(const struct mlx5_cqe64 *cqe)
{
	return (cqe->l4_hdr_type_etc >> 2) & 0x3;
}

/*
 * srqn_uidx (srqn of an error CQE, at the same offset): the SRQ a receive
 * CQE's WQE came from, as a ConnectX with CQE version 0 writes it, 0 for
 * any other CQE (SRQ numbers start at 1). The poller frees that SRQ's
 * WQE: an XRC SRQ's target QP may be another process's.
 */
static inline uint32_t rocemu_cqe_srqn(const struct mlx5_cqe64 *cqe)
{
	return be32toh(cqe->srqn_uidx) & 0xffffff;
}

/*
 * srqn_uidx's top bit: a receive (or its error) of a WQ, an RSS QP's,
 * whose number the CQE's QPN carries (mlx5 reports wc.qp_num = the WQ's
 * number); WQ and QP numbers are apart, as a ConnectX's RQs and QPs.
 */
#define ROCEMU_CQE_WQ_RECV 0x80000000u

static inline bool rocemu_cqe_is_wq(const struct mlx5_cqe64 *cqe)
{
	return be32toh(cqe->srqn_uidx) & ROCEMU_CQE_WQ_RECV;
}

/*
 * sop_drop_qpn (s_wqe_opcode_qpn of an error CQE): the QP and, for send
 * CQEs, the WQE opcode; a RAW_PACKET QP's receive CQE has it in flags_rqpn.
 */
static inline uint32_t rocemu_cqe_qpn(const struct mlx5_cqe64 *cqe)
{
	return rocemu_cqe_is_eth(cqe) ? be32toh(cqe->flags_rqpn) & 0xffffff
				      : be32toh(cqe->sop_drop_qpn) & 0xffffff;
}

static inline uint8_t rocemu_cqe_wqe_opcode(const struct mlx5_cqe64 *cqe)
{
	return (uint8_t)(be32toh(cqe->sop_drop_qpn) >> 24);
}

static inline __be32 rocemu_cqe_sop_drop_qpn(uint8_t wqe_opcode, uint32_t qpn)
{
	return htobe32((uint32_t)wqe_opcode << 24 | (qpn & 0xffffff));
}

/* ---- the CQ doorbell record: two big-endian words (mlx5's MLX5_CQ_SET_CI/ARM_DB) ---- */

enum { ROCEMU_CQ_DBR_SET_CI = 0, ROCEMU_CQ_DBR_ARM = 1 };

#define ROCEMU_CQ_ARM_CMD_MASK (7u << 24)

/* The arm word as mlx5_arm_cq writes it: sn << 28 | command | consumer index. */
static inline uint32_t rocemu_cq_arm_word(uint32_t sn, bool solicited_only, uint32_t ci)
{
	return (sn & 3) << 28 | (solicited_only ? MLX5_CQ_DB_REQ_NOT_SOL : MLX5_CQ_DB_REQ_NOT) |
	       (ci & ROCEMU_CQ_INDEX_MASK);
}

static inline uint32_t rocemu_cq_arm_sn(uint32_t arm)
{
	return arm >> 28 & 3;
}

/* Armed for every completion, not only solicited and error ones. */
static inline bool rocemu_cq_arm_all(uint32_t arm)
{
	return (arm & ROCEMU_CQ_ARM_CMD_MASK) == MLX5_CQ_DB_REQ_NOT;
}

static inline uint32_t rocemu_cq_arm_ci(uint32_t arm)
{
	return arm & ROCEMU_CQ_INDEX_MASK;
}

#pragma GCC visibility pop

#endif /* ROCEMU_RING_H */
