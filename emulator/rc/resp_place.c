/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * What the RC and UC responders share of a SEND or RDMA WRITE message:
 * the receive WQE it takes, the R_Key check of a WRITE's RETH, placing
 * each packet's data by DMA, the receive CQE at its end, and the error CQE
 * of its receive WQE when the responder fails the QP. The checks and
 * what each failure means (a NAK on RC, a dropped message on UC) stay
 * with each responder.
 */
#include <errno.h>
#include <string.h>

#include "emulator/ring/format.h"
#include "emulator/engine/recv_wqe.h"
#include "emulator/engine/transport.h"
#include "emulator/mem/dma.h"
#include "emulator/obj/qp.h"
#include "emulator/rc/rc.h"
#include "net/roce/roce_hdr.h"

int rocemu_resp_recv_ready(struct rocemu_qp *qp, struct rocemu_rc_resp *resp, uint32_t flags)
{
	bool needs_wqe = ((flags & ROCEMU_OPF_SEND) && (flags & ROCEMU_OPF_START)) ||
			 ((flags & ROCEMU_OPF_WRITE) && (flags & ROCEMU_OPF_IMM));
	int err;

	if (!needs_wqe || resp->has_recv)
		return 0;
	/* From the QP's receive queue or its SRQ. */
	err = rocemu_recv_wqe_next(qp, &resp->rq_ci, &resp->recv);
	resp->has_recv = !err;
	return err;
}

int rocemu_resp_write_begin(struct rocemu_qp *qp, struct rocemu_rc_resp *resp, const uint8_t *reth)
{
	unsigned int n;

	resp->write_va = rocemu_reth_va(reth);
	resp->write_rkey = rocemu_reth_rkey(reth);
	resp->write_left = rocemu_reth_dma_len(reth);
	/* A zero-length WRITE touches no memory, so no key is checked (IBTA 9.4.4). */
	return resp->write_left ? rocemu_dma_rkey(qp->mem, resp->write_rkey,
						  resp->write_va, resp->write_left,
						  IBV_ACCESS_REMOTE_WRITE, NULL, 0, &n)
				: 0;
}

/*
 * Consecutive packets, each placed by its own process_vm_writev, cost one
 * system call each. Instead, the data of in-order packets of one QP wait
 * here and land in one call: before a CQE says they are there (the end of
 * a SEND or of a WRITE with immediate), before a receive WQE is taken,
 * before the responder sends anything (rocemu_rc_resp_settle: an ACK says
 * they are there too), when a packet of another QP or out of order is to
 * be placed, when the loop's turn ends and before a control request is
 * served (rocemu_rc_settle_all). Data held past the end of their receive
 * buffer are copied here first (rocemu_resp_hold_own). Every check was
 * made when a packet arrived; a copy that fails is redone packet by
 * packet, so the first failing packet fails its QP exactly as if it had
 * been placed at once.
 */
#define HELD_PKTS 64u
#define HELD_SEGS 256u
#define HELD_OWN_BYTES (64u * 1024)	/* held data copied out of ended receive buffers */

struct held_pkt {
	uint32_t psn, msn;
	uint8_t opcode;
	unsigned int seg_end;	/* its segments end here in held.remote */
};

static struct {
	struct rocemu_qp *qp;	/* NULL while nothing is held */
	uint32_t next_psn;	/* the packet that may join */
	unsigned int npkts, nsegs;
	struct iovec local[HELD_PKTS];
	struct rocemu_dma_seg remote[HELD_SEGS];
	struct held_pkt pkt[HELD_PKTS];
	size_t owned;		/* bytes of own in use */
	unsigned int owned_pkts;	/* local[0..owned_pkts) point into own */
	uint8_t own[HELD_OWN_BYTES];
} held;

/*
 * Land what is held. A packet whose copy fails fails its QP; when that is
 * the last packet and current is true (the caller places it now), its
 * -errno is returned for the caller's own error path instead. Returns
 * -ECANCELED when an earlier packet failed qp.
 */
static int held_flush(const struct rocemu_qp *qp, bool current)
{
	struct rocemu_qp *owner = held.qp;
	unsigned int i, seg = 0;
	const struct rocemu_mm *mm;
	int err;

	if (!owner)
		return 0;
	held.qp = NULL;
	mm = owner->mem.client->mm;
	if (!rocemu_dma_copy(mm, held.local, held.npkts, held.remote, held.nsegs, true))
		return 0;
	for (i = 0; i < held.npkts; seg = held.pkt[i++].seg_end) {
		err = rocemu_dma_copy(mm, &held.local[i], 1, &held.remote[seg],
				      held.pkt[i].seg_end - seg, true);
		if (!err)
			continue;
		if (current && i == held.npkts - 1)
			return err;
		rocemu_rc_resp_place_failed(owner, held.pkt[i].psn, held.pkt[i].msn,
					    held.pkt[i].opcode, err);
		return owner == qp ? -ECANCELED : 0;
	}
	return 0;
}

void rocemu_resp_hold_flush(void)
{
	held_flush(NULL, false);
}

void rocemu_resp_hold_own(void)
{
	size_t bytes = 0;
	unsigned int i;

	if (!held.qp)
		return;
	for (i = held.owned_pkts; i < held.npkts; i++)
		bytes += held.local[i].iov_len;
	if (held.owned + bytes > sizeof(held.own)) {
		held_flush(NULL, false);
		return;
	}
	for (i = held.owned_pkts; i < held.npkts; i++) {
		memcpy(held.own + held.owned, held.local[i].iov_base, held.local[i].iov_len);
		held.local[i].iov_base = held.own + held.owned;
		held.owned += held.local[i].iov_len;
	}
	held.owned_pkts = held.npkts;
}

void rocemu_resp_hold_forget(const struct rocemu_qp *qp)
{
	if (held.qp == qp)
		held.qp = NULL;
}

/* Segments all in one address space, that one: or NULL. */
static const struct rocemu_mm *segs_mm(const struct rocemu_dma_seg *remote, unsigned int n)
{
	for (unsigned int i = 1; i < n; i++)
		if (remote[i].mm != remote[0].mm)
			return NULL;
	return n ? remote[0].mm : NULL;
}

/*
 * Data may wait past the end of their message only when nothing but an
 * acknowledge follows it (a WRITE without immediate), and where the ACK may.
 */
static bool held_past_end(const struct rocemu_qp *qp, const struct rocemu_pkt *pkt)
{
	return !(pkt->info->flags & (ROCEMU_OPF_SEND | ROCEMU_OPF_IMM)) &&
	       rocemu_rc_resp_may_wait(qp);
}

/*
 * Place one packet's data: RC's (pkt) joins what is held; UC's (no pkt)
 * and one spread over several processes land at once, after what is held.
 */
static int place(struct rocemu_qp *qp, const struct rocemu_pkt *pkt, const struct iovec *data,
		 const struct rocemu_dma_seg *remote, unsigned int n)
{
	const struct rocemu_mm *mm = pkt ? segs_mm(remote, n) : NULL;
	int err;

	if (held.qp && (held.qp != qp || !mm || held.next_psn != pkt->psn ||
			held.npkts == HELD_PKTS || held.nsegs + n > HELD_SEGS ||
			mm != held.remote[0].mm)) {
		err = held_flush(qp, false);
		if (err)
			return err;
	}
	if (!mm)
		return rocemu_dma_copy(qp->mem.client->mm, data, 1, remote, n, true);
	/* A hold starts afresh here, however the last one ended (landed or forgotten). */
	if (!held.qp) {
		held.qp = qp;
		held.npkts = 0;
		held.nsegs = 0;
		held.owned = 0;
		held.owned_pkts = 0;
	}
	memcpy(&held.remote[held.nsegs], remote, n * sizeof(*remote));
	held.nsegs += n;
	held.local[held.npkts] = *data;
	held.pkt[held.npkts++] = (struct held_pkt){ .psn = pkt->psn, .msn = qp->rc->resp.msn,
						    .opcode = pkt->opcode,
						    .seg_end = held.nsegs };
	held.next_psn = rocemu_psn_add(pkt->psn, 1);
	if ((pkt->info->flags & ROCEMU_OPF_END) && !held_past_end(qp, pkt))
		return held_flush(qp, true);
	return 0;
}

int rocemu_resp_place_send(struct rocemu_qp *qp, struct rocemu_rc_resp *resp,
			   const struct iovec *data, const struct rocemu_pkt *pkt)
{
	struct rocemu_dma_seg remote[ROCEMU_DMA_MAX_SEGS];
	unsigned int n;
	int err;

	err = rocemu_dma_sgl(qp->mem, resp->recv.sge, resp->recv.num_sge,
			     resp->offset, data->iov_len, IBV_ACCESS_LOCAL_WRITE, remote,
			     ROCEMU_DMA_MAX_SEGS, &n);
	if (err)
		return err;
	/*
	 * A message's first packet shorter than the CQE's room is its only one
	 * (the others are MTU-sized): it goes into the CQE (cs_res), its SGEs
	 * checked as for DMA, and the driver's poll copies it out.
	 */
	if (!resp->offset)
		resp->cqe_data_len = data->iov_len <= qp->cqe_scatter_res &&
				     rocemu_cqe_scatter_reachable(qp->owner->mm, resp->recv.sge,
								  resp->recv.num_sge, remote, n) ?
				     (uint32_t)data->iov_len : 0;
	if (resp->cqe_data_len) {
		memcpy(resp->cqe_data, data->iov_base, data->iov_len);
		return 0;
	}
	return place(qp, pkt, data, remote, n);
}

int rocemu_resp_place_write(struct rocemu_qp *qp, struct rocemu_rc_resp *resp,
			    const struct iovec *data, const struct rocemu_pkt *pkt)
{
	struct rocemu_dma_seg remote[ROCEMU_DMA_MAX_SEGS];
	unsigned int n;
	int err;

	if (data->iov_len > resp->write_left)
		return -EMSGSIZE;
	err = rocemu_dma_rkey(qp->mem, resp->write_rkey, resp->write_va,
			      data->iov_len, IBV_ACCESS_REMOTE_WRITE, remote, ROCEMU_DMA_MAX_SEGS,
			      &n);
	if (err)
		return err;
	resp->write_va += data->iov_len;
	resp->write_left -= (uint32_t)data->iov_len;
	return place(qp, pkt, data, remote, n);
}

void rocemu_resp_complete(struct rocemu_qp *qp, struct rocemu_rc_resp *resp,
			  const struct rocemu_pkt *pkt)
{
	const uint8_t *imm = rocemu_pkt_immdt((uint8_t *)pkt->bth);
	const uint8_t *ieth = rocemu_pkt_ieth((uint8_t *)pkt->bth);
	struct rocemu_cqe_info info = {
		.kind = (pkt->info->flags & ROCEMU_OPF_WRITE) ? ROCEMU_CQE_RECV_WRITE_IMM
			: imm ? ROCEMU_CQE_RECV_SEND_IMM : ieth ? ROCEMU_CQE_RECV_SEND_INV
			: ROCEMU_CQE_RECV_SEND,
		.qpn = qp->qpn,
		.wqe_counter = (uint16_t)resp->recv.counter,
		.byte_cnt = resp->offset,
		.src_qp = qp->attr.dest_qp_num,
		.solicited = rocemu_bth_se(pkt->bth),
	};

	/* A WRITE without immediate takes no receive WQE, not even one a lost UC SEND left. */
	if (resp->has_recv && (pkt->info->flags & (ROCEMU_OPF_SEND | ROCEMU_OPF_IMM))) {
		if (imm)
			memcpy(&info.imm, imm, sizeof(info.imm));
		if (ieth)
			memcpy(&info.imm, ieth, sizeof(info.imm));
		if ((pkt->info->flags & ROCEMU_OPF_SEND) && resp->cqe_data_len == resp->offset &&
		    resp->offset) {
			info.scatter = resp->cqe_data;
			info.scatter_len = resp->offset;
		}
		rocemu_rc_recv_cqe(qp, &info);
		resp->has_recv = false;
	}
	resp->in_msg = RC_MSG_NONE;
	resp->offset = 0;
	resp->cqe_data_len = 0;
}

void rocemu_resp_recv_fail(struct rocemu_qp *qp, struct rocemu_rc_resp *resp,
			   enum rocemu_rc_err err)
{
	struct rocemu_cqe_info info = {
		.kind = ROCEMU_CQE_RECV_ERR,
		.status = rocemu_rc_err_status(err),
		.qpn = qp->qpn,
		.wqe_counter = (uint16_t)resp->recv.counter,
	};

	if (resp->has_recv) {
		rocemu_rc_recv_cqe(qp, &info);
		resp->has_recv = false;
	}
}
