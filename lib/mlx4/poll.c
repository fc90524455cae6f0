/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * ibv_poll_cq and ibv_req_notify_cq on a ConnectX-3's CQ, as libmlx4's
 * mlx4_parse_cqe and mlx4_arm_cq (include/rocemu/ring_mlx4.h): struct
 * mlx4_cqe in 32- or 64-byte entries (then in the second half), the owner
 * bit read with acquire; the QP table, wr_id arrays, consumer index
 * record and software flush are the shim's own (lib/datapath/poll.c).
 */
#include "lib/shim.h"

#include <string.h>

#include "rocemu/log.h"

static uint8_t cqe_opcode(const struct mlx4_cqe *cqe)
{
	return cqe->owner_sr_opcode & MLX4_CQE_OPCODE_MASK;
}

/* libmlx4 handle_good_req: what the WQE's opcode completes as. */
static void parse_send(const struct mlx4_cqe *cqe, struct ibv_wc *wc)
{
	const struct rocemu_wqe_op *op = &rocemu_mlx4_wqe_ops[cqe_opcode(cqe)];

	wc->opcode = (enum ibv_wc_opcode)op->wc_opcode;	/* IBV_WC_SEND for an unknown one */
	wc->wc_flags = op->wc_flags;
	wc->byte_len = op->wc_len == ROCEMU_WC_LEN_CQE ? be32toh(cqe->byte_cnt) :
		       op->wc_len == ROCEMU_WC_LEN_ATOMIC ? sizeof(uint64_t) : 0;
}

/* libmlx4 mlx4_parse_cqe's receive fields of a RoCE port. */
static void parse_recv(const struct mlx4_cqe *cqe, struct ibv_wc *wc)
{
	const struct rocemu_cqe_op *op = &rocemu_mlx4_recv_cqe_ops[cqe_opcode(cqe)];
	uint32_t g_mlpath_rqpn = be32toh(cqe->g_mlpath_rqpn);

	wc->byte_len = be32toh(cqe->byte_cnt);
	wc->opcode = (enum ibv_wc_opcode)op->wc_opcode;
	wc->wc_flags = op->wc_flags;
	if (op->wc_flags & IBV_WC_WITH_IMM)
		wc->imm_data = cqe->immed_rss_invalid;	/* stays big-endian, as on the wire */
	else if (op->wc_flags & IBV_WC_WITH_INV)
		wc->invalidated_rkey = be32toh(cqe->immed_rss_invalid);
	wc->slid = be16toh(cqe->rlid);
	wc->src_qp = g_mlpath_rqpn & MLX4_CQE_QPN_MASK;
	wc->dlid_path_bits = (g_mlpath_rqpn >> 24) & 0x7f;
	wc->wc_flags |= g_mlpath_rqpn & 0x80000000u ? IBV_WC_GRH : 0;
	wc->pkey_index = be32toh(cqe->immed_rss_invalid) & 0x7f;
	wc->sl = be16toh(cqe->sl_vid) >> 13;	/* Ethernet: the VLAN priority */
}

/*
 * Whose the CQE is: an XRC SRQ's receive names the SRQ (MLX4_XRC_QPN_BIT
 * in its QPN; its QP may be another process's), else the QP, whose SRQ
 * or RQ gave a receive. False for a QP or SRQ destroyed since.
 */
static bool cqe_owner(struct rocemu_cq *cq, const struct mlx4_cqe *cqe, struct rocemu_qp **cache,
		      struct rocemu_qp **qp, struct rocemu_srq **srq)
{
	uint32_t qpn = rocemu_mlx4_cqe_qpn(cqe);

	if ((qpn & ROCEMU_MLX4_XRC_QPN_BIT) && !rocemu_mlx4_cqe_is_send(cqe)) {
		*qp = NULL;
		*srq = rocemu_cq_xrc_srq(cq, be32toh(cqe->g_mlpath_rqpn) & MLX4_CQE_QPN_MASK);
		return *srq != NULL;
	}
	*qp = rocemu_cq_qp(cq, qpn, cache);
	*srq = *qp && (*qp)->qpx.qp_base.srq ? to_rsrq((*qp)->qpx.qp_base.srq) : NULL;
	return *qp != NULL;
}

bool rocemu_mlx4_cq_poll_one(struct rocemu_cq *cq, struct ibv_wc *wc, struct rocemu_qp **cache)
{
	const struct mlx4_err_cqe *ecqe;
	struct mlx4_cqe *cqe;
	struct rocemu_srq *srq;
	struct rocemu_qp *qp;

	for (;;) {
		cqe = rocemu_mlx4_cqe_sw(cq, cq->cons_index);
		if (!cqe)	/* what the daemon wrote is all read: a dead one's WRs are flushed */
			return rocemu_conn_is_lost(&to_rctx(cq->ibcq.context)->conn) &&
			       rocemu_cq_flush_one(cq, wc);
		cq->cons_index++;
		if (__builtin_expect(cqe_owner(cq, cqe, cache, &qp, &srq), 1))
			break;
		/* A CQE of a QP or XRC SRQ destroyed since (cleaned from the CQ as libmlx4 does): dropped. */
		rocemu_log(ROCEMU_LOG_DEBUG, "cq 0x%06x: CQE of unknown qp 0x%06x dropped (opcode %u wqe %u)",
			   cq->cqn, rocemu_mlx4_cqe_qpn(cqe), cqe_opcode(cqe), be16toh(cqe->wqe_index));
	}
	memset(wc, 0, sizeof(*wc));
	wc->qp_num = rocemu_mlx4_cqe_qpn(cqe);
	if (rocemu_mlx4_cqe_is_send(cqe))
		wc->wr_id = rocemu_sq_complete(&qp->sq, be16toh(cqe->wqe_index));
	else if (srq)
		wc->wr_id = rocemu_srq_complete(srq, be16toh(cqe->wqe_index));
	else
		wc->wr_id = rocemu_rq_complete(&qp->rq);
	if (cqe_opcode(cqe) == MLX4_CQE_OPCODE_ERROR) {
		ecqe = (const struct mlx4_err_cqe *)cqe;
		wc->status = rocemu_mlx4_cqe_error_status(ecqe->syndrome);
		wc->vendor_err = ecqe->vendor_err;
		wc->opcode = rocemu_mlx4_cqe_is_send(cqe) ? IBV_WC_SEND : IBV_WC_RECV;	/* undefined on error */
		if (ecqe->syndrome != MLX4_CQE_SYNDROME_WR_FLUSH_ERR)
			rocemu_log(ROCEMU_LOG_DEBUG, "%s qp 0x%06x %s error CQE syndrome 0x%02x vendor 0x%02x",
				   to_rctx(cq->ibcq.context)->info.name, wc->qp_num,
				   rocemu_mlx4_cqe_is_send(cqe) ? "send" : "recv", ecqe->syndrome, ecqe->vendor_err);
		return true;
	}
	wc->status = IBV_WC_SUCCESS;
	if (rocemu_mlx4_cqe_is_send(cqe))
		parse_send(cqe, wc);
	else
		parse_recv(cqe, wc);
	return true;
}

int rocemu_mlx4_poll_cq_op(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	return rocemu_cq_poll(to_rcq(ibcq), num_entries, wc, rocemu_mlx4_cq_poll_one);
}

int rocemu_mlx4_req_notify_cq_op(struct ibv_cq *ibcq, int solicited_only)
{
	struct rocemu_cq *cq = to_rcq(ibcq);
	uint32_t arm = rocemu_mlx4_cq_arm_word(__atomic_load_n(&cq->arm_sn, __ATOMIC_RELAXED),
					       solicited_only, cq->cons_index);

	/* Release: the daemon that sees the arm also sees the consumer index. */
	__atomic_store_n(&cq->dbrec[ROCEMU_CQ_DBR_ARM], htobe32(arm), __ATOMIC_RELEASE);
	rocemu_ctx_doorbell(to_rctx(ibcq->context));
	return 0;
}
