/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The ring format as a seam: the records the engines work from (a parsed
 * send or receive WQE, a completion to write) and the per-device table
 * that reads a device's WQE rings and writes its CQEs (mlx5/ for a
 * ConnectX-5, mlx4/ for a ConnectX-3). No engine reads a ring itself.
 */
#ifndef ROCEMU_EMULATOR_RING_FORMAT_H
#define ROCEMU_EMULATOR_RING_FORMAT_H

#include <endian.h>
#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>

#include "emulator/core/device.h"
#include "emulator/mem/dma.h"
#include "emulator/mem/mkey_indirect.h"
#include "emulator/mem/mw.h"
#include "rocemu/ring.h"

struct rocemu_cq;
struct rocemu_eth_frame;
struct rocemu_qp;
struct rocemu_srq;

/* Where a UD or DC send goes: its datagram segment, as the format carries it. */
struct rocemu_send_dest {
	uint32_t dqpn;			/* UD: the QP; DC: the DCT */
	uint32_t qkey;			/* UD */
	uint64_t dc_key;		/* DC: the DCT's access key */
	uint16_t udp_sport;		/* the RoCEv2 source port the address handle picked */
	uint8_t rgid[16];		/* the destination GID (::ffff:a.b.c.d) */
};

/*
 * A RAW_PACKET WQE's Ethernet segment: the frame's first bytes, inline in
 * the WQE (the rest is the WQE's data), and what the port does to it.
 */
#define ROCEMU_ETH_INLINE_HDR_MAX 1008	/* what a WQE of 63 units can hold */

struct rocemu_send_eth {
	bool l3_csum, l4_csum;		/* IBV_SEND_IP_CSUM: the IPv4 and TCP/UDP checksums to fill */
	uint16_t mss;			/* TSO: payload bytes per frame */
	uint16_t hdr_len;
	uint8_t hdr[ROCEMU_ETH_INLINE_HDR_MAX];
};

struct rocemu_send_wqe {
	uint32_t bb;			/* free-running counter of the first basic block */
	uint32_t bbs;			/* basic blocks it spans */
	uint16_t wqe_counter;		/* what the CQE reports */
	uint8_t opcode;			/* the format's: rocemu_ring_wqe_op says what it does */
	bool signaled;			/* a CQE on success */
	bool solicited;			/* SEND: the solicited event bit */
	bool fence;			/* waits for READs and atomics before it */
	__be32 imm;
	uint64_t raddr;
	uint32_t rkey;
	uint64_t swap_add, compare;	/* atomics */
	struct rocemu_mw_bind bind;	/* BIND of a window */
	struct rocemu_send_dest dest;	/* UD, DCI */
	uint32_t xrc_srqn;		/* XRC: the SRQ at the target */
	uint32_t length;		/* bytes of data: the inline bytes, then the SGEs' */
	uint32_t inline_len;		/* inline bytes that lead the data (UCX: a header) */
	unsigned int num_sge;
	struct rocemu_sge sge[ROCEMU_MAX_SGE];
	uint8_t inline_data[ROCEMU_MAX_INLINE];	/* the RC stage copies up to here */
	/* Last: a UMR is local, never staged, so never copied. */
	bool umr;			/* an mkey UMR instead of a bind (mkey_indirect.h) */
	struct rocemu_umr umr_op;
	struct rocemu_send_eth eth;	/* RAW_PACKET's, never staged either */
};

/*
 * A receive ring in the application's memory, a QP's RQ or a WQ's: the
 * format reads both alike (rocemu_qp_rq_ring, rocemu_wq_rq_ring).
 */
struct rocemu_rq_ring {
	const uint8_t *buf;		/* WQE 0 */
	const void *dbrec;		/* its doorbell record */
	uint32_t wqe_cnt;		/* a power of two; 0: no ring */
	uint32_t wqe_shift;		/* log2 of the stride */
	uint32_t num;			/* the QP's or WQ's number, for the log */
	bool wq;			/* a WQ's */
};

struct rocemu_recv_wqe {
	uint32_t counter;
	uint64_t length;		/* room in all SGEs */
	unsigned int num_sge;
	struct rocemu_sge sge[ROCEMU_MAX_SGE];
};

/* What a completion says; the format writes it as its own CQE opcode. */
enum rocemu_cqe_kind {
	ROCEMU_CQE_SEND_DONE,		/* a send WQE completed */
	ROCEMU_CQE_RECV_SEND,		/* a receive: SEND */
	ROCEMU_CQE_RECV_SEND_IMM,	/* SEND with immediate */
	ROCEMU_CQE_RECV_SEND_INV,	/* SEND with invalidate */
	ROCEMU_CQE_RECV_WRITE_IMM,	/* RDMA WRITE with immediate */
	ROCEMU_CQE_SEND_ERR,		/* a send WQE in error */
	ROCEMU_CQE_RECV_ERR,		/* a receive WQE in error */
};

/* What a RAW_PACKET receive's CQE says of its frame, besides its length. */
struct rocemu_cqe_eth {
	const struct rocemu_eth_frame *frame;	/* its parse: L3/L4 types, checksum verdicts */
	bool vlan_stripped;		/* CVLAN_STRIPPING took its tag: frame->vlan_tci */
	uint32_t flow_tag;		/* of the rule that steered it, 0: none */
	uint32_t rss_hash;		/* RSS: the Toeplitz hash, and its fields (0: none) */
	uint8_t rss_hash_type;
};

/* One completion, whatever its kind. */
struct rocemu_cqe_info {
	enum rocemu_cqe_kind kind;
	enum ibv_wc_status status;	/* error kinds: why */
	uint8_t wqe_opcode;		/* send kinds: the WQE's opcode, as parsed */
	uint32_t qpn;
	uint16_t wqe_counter;
	uint32_t byte_cnt;
	__be32 imm;			/* receive: as on the wire */
	uint32_t src_qp;
	uint32_t srqn;			/* receive from an SRQ: its number, else 0 */
	bool wq;			/* receive into a WQ (an RSS QP's): qpn is the WQ's number */
	bool grh_ipv4;			/* UD receive: its GRH is an IPv4 header */
	const struct rocemu_cqe_eth *eth;	/* RAW_PACKET receive: what the port found, else NULL */
	bool solicited;
	const uint8_t *scatter;		/* data carried in the CQE (cqe_scatter.h), or NULL */
	uint32_t scatter_len;		/* its bytes: at most half the CQE */
};

/* Whether a completion of this kind is an error's. */
static inline bool rocemu_cqe_kind_error(enum rocemu_cqe_kind kind)
{
	return kind == ROCEMU_CQE_SEND_ERR || kind == ROCEMU_CQE_RECV_ERR;
}

/*
 * A ring format: everything that knows how WQEs, doorbell records and
 * CQEs are laid out. Each call reads the application's memory and checks
 * it (mlx5/wqe.h and mlx5/cqe.h say how for mlx5).
 */
struct rocemu_ring_format {
	const char *name;
	/* A QP's rings for the caps asked (a receive stride of inl_recv_sz bytes at least): 0 or -EINVAL. */
	int (*wq_size)(const struct ibv_qp_cap *want, enum ibv_qp_type type, uint32_t max_tso_header,
		       uint32_t inl_recv_sz, struct rocemu_wq_sizes *sizes);
	/* What rings of these sizes hold, before the device's limits clamp it. */
	void (*wq_caps)(const struct rocemu_wq_sizes *sizes, enum ibv_qp_type type,
			struct ibv_qp_cap *cap);
	/* Bytes of a QP's doorbell page: mlx5's BlueFlame register, mlx4's UAR page. */
	uint32_t bf_size;
	/* What each of its WQE opcodes does, by opcode (256 rows; flags 0: none). */
	const struct rocemu_wqe_op *wqe_ops;
	/* Send BBs the doorbell says are posted past bb; -EINVAL past the ring. */
	int (*sq_posted)(const struct rocemu_qp *qp, uint32_t bb);
	/* The 16-bit index where the send WQEs posted past bb end (SQ drain waits for it). */
	uint16_t (*sq_doorbell)(const struct rocemu_qp *qp, uint32_t bb);
	/* Parse the send WQE at bb of posted BBs: 0, -EINVAL or -EOPNOTSUPP; w->bbs the step. */
	int (*parse_send)(const struct rocemu_qp *qp, uint32_t bb, uint32_t posted,
			  struct rocemu_send_wqe *w);
	/* A DCI's WQE at bb, without parsing it whole: where it goes and its stream. */
	void (*peek_dc)(const struct rocemu_qp *qp, uint32_t bb, struct rocemu_send_dest *dest,
			uint16_t *stream);
	/* Receive WQEs posted past counter; -EINVAL past the ring. */
	int (*rq_posted)(const struct rocemu_rq_ring *rq, uint32_t counter);
	int (*parse_recv)(const struct rocemu_rq_ring *rq, uint32_t counter, struct rocemu_recv_wqe *w);
	/* SRQ WQEs posted past those taken; parse one, returning the index it links to. */
	int (*srq_posted)(const struct rocemu_srq *srq, uint32_t taken);
	uint16_t (*parse_srq)(const struct rocemu_srq *srq, uint16_t index, struct rocemu_recv_wqe *w);
	/* Whether the doorbell record was ever written; zero it (QP reset). */
	bool (*doorbell_written)(const struct rocemu_qp *qp);
	void (*doorbell_reset)(struct rocemu_qp *qp);
	/* A program that posts without the shim (direct.c): whether it rang qp since the last look. */
	bool (*direct_rung)(struct rocemu_qp *qp);
	/* Write a CQE and raise the event it owes; false when the CQ is in error. */
	bool (*cqe_write)(struct rocemu_cq *cq, const struct rocemu_cqe_info *info);
	/* The CQ's arm word may have changed: raise the event it owes now. */
	void (*cq_arm_check)(struct rocemu_cq *cq);
	/* Whether a CQE of size bytes exists; the size when the application asks none. */
	bool (*cqe_size_valid)(uint32_t size);
	uint32_t cqe_size_default;
	/* A new CQ ring: returns its untouched entries, which cqe_write prepares ahead. */
	uint32_t (*cq_ring_start)(void *ring, uint32_t cqe_size, uint32_t ncqe, uint32_t pi,
				  uint32_t written);
	/* Resize: cq's unpolled CQEs into a new ring; its untouched entries, or -EINVAL. */
	int (*cq_ring_move)(const struct rocemu_cq *cq, void *to, uint32_t to_ncqe, void *to_dbrec);
};

/* What a WQE of format f's opcode does. */
static inline const struct rocemu_wqe_op *rocemu_ring_wqe_op(const struct rocemu_ring_format *f,
							     uint8_t opcode)
{
	return &f->wqe_ops[opcode];
}

#endif /* ROCEMU_EMULATOR_RING_FORMAT_H */
