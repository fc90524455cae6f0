/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/mlx5/cqe.h"

#include <errno.h>
#include <string.h>
#include <netinet/tcp.h>
#include <infiniband/mlx5dv.h>

#include "emulator/core/client.h"
#include "emulator/obj/cq.h"
#include "emulator/cqev/cq_event.h"
#include "net/eth/eth_frame.h"
#include "rocemu/clock.h"
#include "rocemu/ring.h"

/* mlx5's arm word (ring.h): a command of 0 arms for every CQE. */
static struct rocemu_cq_arm cq_arm(const struct rocemu_cq *cq)
{
	uint32_t arm = rocemu_cq_dbrec_read(cq, ROCEMU_CQ_DBR_ARM);

	return (struct rocemu_cq_arm){ .sn = (uint8_t)rocemu_cq_arm_sn(arm), .armed = true,
				       .all = rocemu_cq_arm_all(arm), .ci = rocemu_cq_arm_ci(arm) };
}

/*
 * A ring starts as the memfd's zeros, which in the first pass read as
 * software's (opcode REQ, owner 0). A poller reads no further than the
 * first entry not software's (mlx5's poll_one, __mlx5_cq_clean), so only
 * the entry at the producer index need be hardware's: each write makes the
 * next one so, as long as untouched entries remain, rather than the whole
 * ring up front (256 MiB for 4M entries, in the loop). Hardware's by both
 * tests: an invalid opcode (mlx5's) and the owner bit of the pass before
 * (UCX's, which reads the owner bit alone and sets it so in every entry
 * when it takes a CQ over).
 */
static void cqe_invalidate(void *ring, uint32_t cqe_size, uint32_t ncqe, uint32_t index)
{
	rocemu_cqe_at(ring, cqe_size, ncqe, index)->op_own =
		rocemu_cqe_op_own(MLX5_CQE_INVALID, index + ncqe, ncqe);
}

uint32_t rocemu_cqe_ring_start(void *ring, uint32_t cqe_size, uint32_t ncqe, uint32_t pi,
			       uint32_t written)
{
	cqe_invalidate(ring, cqe_size, ncqe, pi);
	return ncqe - written - 1;
}

int rocemu_cqe_ring_move(const struct rocemu_cq *cq, void *to, uint32_t to_ncqe, void *to_dbrec)
{
	__be32 *dbrec = to_dbrec;
	uint32_t ci = rocemu_cq_dbrec_read(cq, ROCEMU_CQ_DBR_SET_CI), n = (cq->pi - ci) & ROCEMU_CQ_INDEX_MASK;

	/* Hardware's rule too: the unpolled CQEs must fit, one slot kept free. */
	if (n > cq->layout.ncqe || n >= to_ncqe)
		return -EINVAL;
	for (uint32_t i = ci; i != ci + n; i++) {
		uint32_t size = cq->layout.cqe_size;
		const struct mlx5_cqe64 *src = rocemu_cqe_at(cq->ring.addr, size, cq->layout.ncqe, i);
		struct mlx5_cqe64 *cqe = rocemu_cqe_at(to, size, to_ncqe, i);

		/* The whole entry: a 128-byte CQE may carry scattered data in its first half. */
		memcpy((uint8_t *)cqe + sizeof(*cqe) - size, (const uint8_t *)src + sizeof(*src) - size,
		       size);
		cqe->op_own = (uint8_t)(rocemu_cqe_op_own(src->op_own >> 4, i, to_ncqe) |
					(src->op_own & ROCEMU_CQE_SCATTER_MASK));
	}
	/* Same free-running indices: the shim resumes polling at ci, the daemon writes at pi. */
	dbrec[ROCEMU_CQ_DBR_SET_CI] = htobe32(ci);
	dbrec[ROCEMU_CQ_DBR_ARM] = htobe32(rocemu_cq_dbrec_read(cq, ROCEMU_CQ_DBR_ARM));
	return (int)rocemu_cqe_ring_start(to, cq->layout.cqe_size, to_ncqe, cq->pi, n);
}

void rocemu_cqe_arm_check(struct rocemu_cq *cq)
{
	rocemu_cq_event_arm_check(cq, cq_arm(cq));
}

/*
 * A ConnectX's CQE SL of a UD receive over RoCE is the packet type (PRM):
 * bit 3 for a frame with a UDP header (RoCE v2), bits 2:0 its L3 header
 * type. UCX's ud_verbs reads it from wc.sl to find the GRH's DGID.
 */
static uint32_t roce_packet_type(uint8_t l3_hdr_type)
{
	return l3_hdr_type ? 0x8u | l3_hdr_type : 0;
}

/*
 * Scatter to CQE: the data of a 64-byte CQE fills its first 32 bytes, that
 * of a 128-byte CQE the 64 bytes before its struct mlx5_cqe64 (mlx5 reads
 * them at cqe - 1). Returns the op_own flag that says so.
 */
static uint8_t scatter_into_cqe(struct mlx5_cqe64 *cqe, uint32_t cqe_size,
				const struct rocemu_cqe_info *info)
{
	if (cqe_size == 2 * sizeof(*cqe)) {
		memcpy(cqe - 1, info->scatter, info->scatter_len);
		return MLX5_INLINE_SCATTER_64;
	}
	memcpy(cqe, info->scatter, info->scatter_len);
	return MLX5_INLINE_SCATTER_32;
}

bool rocemu_cqe_size_valid(uint32_t size)
{
	return size == sizeof(struct mlx5_cqe64) || size == 2 * sizeof(struct mlx5_cqe64);
}

/* The CQE opcode of each kind of completion. */
static const uint8_t cqe_opcode[] = {
	[ROCEMU_CQE_SEND_DONE] = MLX5_CQE_REQ,
	[ROCEMU_CQE_RECV_SEND] = MLX5_CQE_RESP_SEND,
	[ROCEMU_CQE_RECV_SEND_IMM] = MLX5_CQE_RESP_SEND_IMM,
	[ROCEMU_CQE_RECV_SEND_INV] = MLX5_CQE_RESP_SEND_INV,
	[ROCEMU_CQE_RECV_WRITE_IMM] = MLX5_CQE_RESP_WR_IMM,
	[ROCEMU_CQE_SEND_ERR] = MLX5_CQE_REQ_ERR,
	[ROCEMU_CQE_RECV_ERR] = MLX5_CQE_RESP_ERR,
};

/* The CQE's L4 header types (PRM; the kernel's CQE_L4_HDR_TYPE_*, not in mlx5dv.h). */
enum {
	CQE_L4_NONE = 0x0,
	CQE_L4_TCP_NO_ACK = 0x1,
	CQE_L4_UDP = 0x2,
	CQE_L4_TCP_ACK_NO_DATA = 0x3,
	CQE_L4_TCP_ACK_AND_DATA = 0x4,
};
/* rss_hash_result and rss_hash_type, where mlx5dv.h has rsvd4 (PRM offsets 0x0c, 0x10). */
#define CQE_RSS_HASH_OFFSET 12
#define CQE_RSS_TYPE_OFFSET 16

static uint8_t cqe_l4_type(const struct rocemu_eth_frame *f)
{
	const uint8_t *tcp = f->data + f->l4_off;
	uint32_t ip_end = f->len;

	if (f->l4 == ROCEMU_ETH_L4_UDP)
		return CQE_L4_UDP;
	if (f->l4 != ROCEMU_ETH_L4_TCP)
		return CQE_L4_NONE;
	if (!(f->tcp_flags & TH_ACK))
		return CQE_L4_TCP_NO_ACK;
	/* The IP datagram's own end: a frame padded to 60 bytes carries no data in its padding. */
	if (f->l3 == ROCEMU_ETH_L3_IPV4)
		ip_end = f->l3_off + ((uint32_t)f->data[f->l3_off + 2] << 8 | f->data[f->l3_off + 3]);
	else if (f->l3 == ROCEMU_ETH_L3_IPV6)
		ip_end = f->l3_off + f->l3_len +
			 ((uint32_t)f->data[f->l3_off + 4] << 8 | f->data[f->l3_off + 5]);
	return ip_end > f->l4_off + (uint32_t)(tcp[12] >> 4) * 4 ? CQE_L4_TCP_ACK_AND_DATA
								 : CQE_L4_TCP_ACK_NO_DATA;
}

/*
 * A RAW_PACKET receive as a ConnectX reports it (rdma-core's mlx5 poll
 * reads these): the L3/L4 types and checksum verdicts, the stripped VLAN,
 * the flow tag in sop_drop_qpn's low 24 bits (0: none), the RSS hash; the
 * QP, which sop_drop_qpn no longer names, in flags_rqpn (ring.h: L2_OK
 * marks the CQE so).
 */
static void fill_eth(struct mlx5_cqe64 *cqe, const struct rocemu_cqe_info *info)
{
	const struct rocemu_cqe_eth *e = info->eth;
	const struct rocemu_eth_frame *f = e->frame;
	uint8_t l3 = f->l3 == ROCEMU_ETH_L3_IPV4 ? MLX5_CQE_L3_HDR_TYPE_IPV4 :
		     f->l3 == ROCEMU_ETH_L3_IPV6 ? MLX5_CQE_L3_HDR_TYPE_IPV6 : MLX5_CQE_L3_HDR_TYPE_NONE;
	uint8_t l4 = cqe_l4_type(f);
	__be32 hash = htobe32(e->rss_hash);

	cqe->l4_hdr_type_etc = (uint8_t)(l4 << 4 | l3 << 2 | e->vlan_stripped);
	cqe->hds_ip_ext = MLX5_CQE_L2_OK | (l3 && f->l3_csum_ok ? MLX5_CQE_L3_OK : 0) |
			  (l4 != CQE_L4_NONE && f->l4_csum_ok ? MLX5_CQE_L4_OK : 0);
	cqe->vlan_info = e->vlan_stripped ? htobe16(f->vlan_tci) : 0;
	cqe->sop_drop_qpn = htobe32(e->flow_tag & ROCEMU_CQE_FLOW_TAG_MASK);
	cqe->flags_rqpn = htobe32(info->qpn & 0xffffff);
	memcpy((uint8_t *)cqe + CQE_RSS_HASH_OFFSET, &hash, sizeof(hash));
	((uint8_t *)cqe)[CQE_RSS_TYPE_OFFSET] = e->rss_hash_type;
}

static void fill_cqe(struct mlx5_cqe64 *cqe, const struct rocemu_cqe_info *info, uint8_t syndrome)
{
	struct mlx5_err_cqe *err = (struct mlx5_err_cqe *)cqe;

	memset(cqe, 0, offsetof(struct mlx5_cqe64, op_own));
	/* ring.h: also an error CQE's srqn; a WQ's receive is marked there */
	cqe->srqn_uidx = htobe32(info->srqn | (info->wq ? ROCEMU_CQE_WQ_RECV : 0));
	if (rocemu_cqe_kind_error(info->kind)) {
		err->syndrome = syndrome;
		err->s_wqe_opcode_qpn = rocemu_cqe_sop_drop_qpn(info->wqe_opcode, info->qpn);
		err->wqe_counter = htobe16(info->wqe_counter);
		return;
	}
	cqe->byte_cnt = htobe32(info->byte_cnt);
	/* The completion time in device cycles (an error CQE's syndrome sits where it would). */
	cqe->timestamp = htobe64(rocemu_clock_now());
	cqe->wqe_counter = htobe16(info->wqe_counter);
	if (info->kind == ROCEMU_CQE_SEND_DONE) {
		cqe->sop_drop_qpn = rocemu_cqe_sop_drop_qpn(info->wqe_opcode, info->qpn);
		return;
	}
	if (info->eth) {
		fill_eth(cqe, info);
		return;
	}
	uint8_t l3_hdr_type = info->grh_ipv4 ? MLX5_CQE_L3_HDR_TYPE_IPV4 : 0;

	cqe->imm_inval_pkey = info->imm;
	cqe->sop_drop_qpn = htobe32(info->qpn);
	cqe->flags_rqpn = htobe32((uint32_t)l3_hdr_type << 28 | roce_packet_type(l3_hdr_type) << 24 |
				  (info->src_qp & 0xffffff));
}

bool rocemu_cqe_write(struct rocemu_cq *cq, const struct rocemu_cqe_info *info)
{
	uint32_t ncqe = cq->layout.ncqe, ci = rocemu_cq_dbrec_read(cq, ROCEMU_CQ_DBR_SET_CI);
	struct mlx5_cqe64 *cqe;
	bool error = rocemu_cqe_kind_error(info->kind);
	uint8_t op = cqe_opcode[info->kind];
	uint8_t syndrome = error ? rocemu_cqe_syndrome_of(info->status) : 0;
	uint8_t scatter;

	if (!rocemu_cq_room(cq, ci, info->qpn))
		return false;
	cqe = rocemu_cqe_at(cq->ring.addr, cq->layout.cqe_size, ncqe, cq->pi);
	fill_cqe(cqe, info, syndrome);
	if (cq->untouched) {
		cqe_invalidate(cq->ring.addr, cq->layout.cqe_size, ncqe, cq->pi + 1);
		cq->untouched--;
	}
	/* After the fields: a 64-byte CQE's data covers its first 32 bytes, as on a ConnectX. */
	scatter = info->scatter && !error ? scatter_into_cqe(cqe, cq->layout.cqe_size, info) : 0;
	/* Release: every field is visible before the owner bit hands the CQE over. */
	__atomic_store_n(&cqe->op_own, rocemu_cqe_op_own(op, cq->pi, ncqe) | scatter,
			 __ATOMIC_RELEASE);
	rocemu_cq_written(cq, info, op, syndrome, cq_arm);
	return true;
}
