/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * A frame the port steered to a RAW_PACKET QP: dropped and counted unless
 * the QP receives (RTR, RTS) and a receive WQE is posted, in its SRQ when
 * it has one, else in its RQ (out_of_buffer, as a ConnectX counts it), or
 * for an RSS QP in the WQ its hash picks, which must be RDY;
 * then the WQE takes the whole frame, its 802.1Q tag taken out with
 * CVLAN_STRIPPING (the CQE reports it) and its FCS after it with
 * SCATTER_FCS, and the CQE says what the port parsed of it. A WQE too
 * small completes in error with a local length error.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "emulator/ring/format.h"
#include "emulator/engine/dgram_qp.h"
#include "emulator/engine/recv_wqe.h"
#include "emulator/mem/dma.h"
#include "emulator/obj/qp.h"
#include "emulator/raw/raw.h"
#include "emulator/wq/rwq_ind_table.h"
#include "emulator/wq/wq.h"
#include "net/eth/eth_frame.h"
#include "net/roce/icrc.h"
#include "rocemu/log.h"

/* The MACs: an 802.1Q tag follows them. */
#define MACS_LEN (2 * ROCEMU_ETH_ALEN)

static bool raw_receives(const struct rocemu_qp *qp)
{
	return qp->attr.qp_state == IBV_QPS_RTR || qp->attr.qp_state == IBV_QPS_RTS;
}

/* Count a frame the QP does not take; the debug log says why. */
static void raw_drop(struct rocemu_qp *qp, uint64_t *counter, const char *why)
{
	(*counter)++;
	rocemu_log(ROCEMU_LOG_DEBUG, "%s qp 0x%06x rx frame drop: %s", qp->owner->dev->name, qp->qpn,
		   why);
}

/*
 * The frame as the WQE takes it, into local (3 slots): without its tag
 * when strip, then the FCS at fcs when not NULL. Returns the slots used.
 */
static unsigned int frame_iov(const struct rocemu_eth_frame *f, bool strip, uint8_t *fcs,
			      struct iovec *local)
{
	unsigned int n = 0;

	if (strip) {
		local[n++] = (struct iovec){ (void *)f->data, MACS_LEN };
		local[n++] = (struct iovec){ (void *)(f->data + MACS_LEN + ROCEMU_VLAN_HLEN),
					     f->len - MACS_LEN - ROCEMU_VLAN_HLEN };
	} else {
		local[n++] = (struct iovec){ (void *)f->data, f->len };
	}
	if (fcs) {
		/* The frame's CRC-32 as the wire carries it: over the frame with its tag, LSB first. */
		uint32_t crc = htole32(rocemu_crc32(0, f->data, f->len));

		memcpy(fcs, &crc, ROCEMU_ETH_FCS_LEN);
		local[n++] = (struct iovec){ fcs, ROCEMU_ETH_FCS_LEN };
	}
	return n;
}

/*
 * Place f as the WQE w takes it (len: its bytes there) in mem's memory:
 * IBV_WC_SUCCESS, or the status of the WQE's error CQE.
 */
static enum ibv_wc_status frame_place(const struct rocemu_qp *qp, const struct rocemu_mem_owner *mem,
				      const struct rocemu_eth_frame *f, bool strip, bool scatter_fcs,
				      const struct rocemu_recv_wqe *w, uint32_t *len)
{
	struct rocemu_dma_seg remote[ROCEMU_DMA_MAX_SEGS];
	uint8_t fcs[ROCEMU_ETH_FCS_LEN];
	struct iovec local[3];
	unsigned int nlocal, n;
	int err;

	nlocal = frame_iov(f, strip, scatter_fcs ? fcs : NULL, local);
	*len = f->len - (strip ? ROCEMU_VLAN_HLEN : 0) + (scatter_fcs ? ROCEMU_ETH_FCS_LEN : 0);
	if (*len > w->length)
		return IBV_WC_LOC_LEN_ERR;
	err = rocemu_dma_sgl(*mem, w->sge, w->num_sge, 0, *len, IBV_ACCESS_LOCAL_WRITE, remote,
			     ROCEMU_DMA_MAX_SEGS, &n);
	if (!err)
		err = rocemu_dma_copy(qp->owner->mm, local, nlocal, remote, n, true);
	if (err)
		return err == -EMSGSIZE ? IBV_WC_LOC_LEN_ERR : IBV_WC_LOC_PROT_ERR;
	return IBV_WC_SUCCESS;
}

/*
 * An RSS QP's frame (a TIR's): into the WQ of its table the hash picks,
 * dropped and counted unless that WQ is RDY and has a WQE posted; the CQE
 * goes to the WQ's CQ with the WQ's number and the hash.
 */
static void rss_rx_frame(struct rocemu_qp *qp, const struct rocemu_eth_frame *f, uint32_t flow_tag)
{
	struct rocemu_device_counters *k = &qp->owner->dev->counters;
	struct rocemu_rss_hash hash;
	struct rocemu_wq *wq = rocemu_rss_select(qp->raw->rss_table, &qp->raw->rss, f, &hash);
	struct rocemu_rq_ring ring = rocemu_wq_rq_ring(wq);
	bool strip = (wq->flags & IBV_WQ_FLAGS_CVLAN_STRIPPING) && f->vlan;
	struct rocemu_cqe_eth eth = { .frame = f, .vlan_stripped = strip, .flow_tag = flow_tag,
				      .rss_hash = hash.value, .rss_hash_type = hash.type };
	const struct rocemu_mem_owner mem = { .client = wq->owner, .pd = wq->pd, .qpn = wq->wqn };
	struct rocemu_cqe_info info;
	struct rocemu_recv_wqe w;
	enum ibv_wc_status status;
	uint32_t len;

	if (wq->state != IBV_WQS_RDY) {
		raw_drop(qp, &k->raw_rx_dropped, "its WQ not ready");
		return;
	}
	/* A doorbell past the ring (-EINVAL) leaves nothing to take either. */
	if (rocemu_recv_wqe_take(qp->owner->dev, NULL, &ring, &wq->consumed, &w)) {
		raw_drop(qp, &k->out_of_buffer, "no receive posted in its WQ");
		return;
	}
	status = frame_place(qp, &mem, f, strip, wq->flags & IBV_WQ_FLAGS_SCATTER_FCS, &w, &len);
	if (status) {
		rocemu_wq_recv_fail(wq, w.counter, status);
		return;
	}
	k->raw_rx_frames++;
	info = (struct rocemu_cqe_info){
		.kind = ROCEMU_CQE_RECV_SEND,
		.qpn = wq->wqn,
		.wqe_counter = (uint16_t)w.counter,
		.byte_cnt = len,
		.wq = true,
		.eth = &eth,
	};
	qp->owner->dev->format->cqe_write(wq->cq, &info);
}

void rocemu_raw_rx_frame(struct rocemu_qp *qp, const struct rocemu_eth_frame *f,
			 uint32_t flow_tag)
{
	struct rocemu_device_counters *k = &qp->owner->dev->counters;
	bool strip = (qp->create_flags & IBV_QP_CREATE_CVLAN_STRIPPING) && f->vlan;
	struct rocemu_cqe_eth eth = { .frame = f, .vlan_stripped = strip, .flow_tag = flow_tag };
	struct rocemu_cqe_info info;
	struct rocemu_recv_wqe w;
	enum ibv_wc_status status;
	uint32_t len;
	int err;

	if (qp->raw->rss_table) {
		rss_rx_frame(qp, f, flow_tag);
		return;
	}
	if (!raw_receives(qp)) {
		raw_drop(qp, &k->raw_rx_dropped, "not receiving");
		return;
	}
	/* The SRQ's limit event comes with the WQE that takes it below the limit. */
	err = rocemu_recv_wqe_next(qp, &qp->raw->rq_ci, &w);
	if (err == -EINVAL) {
		rocemu_dgram_qp_fatal(qp);
		return;
	}
	if (err) {
		raw_drop(qp, &k->out_of_buffer, "no receive posted");
		return;
	}
	status = frame_place(qp, &qp->mem, f, strip, qp->create_flags & IBV_QP_CREATE_SCATTER_FCS,
			     &w, &len);
	if (status) {
		rocemu_dgram_recv_fail(qp, w.counter, status);
		return;
	}
	k->raw_rx_frames++;
	info = (struct rocemu_cqe_info){
		.kind = ROCEMU_CQE_RECV_SEND,
		.qpn = qp->qpn,
		.wqe_counter = (uint16_t)w.counter,
		.byte_cnt = len,
		.srqn = rocemu_qp_recv_srqn(qp),
		.eth = &eth,
	};
	qp->owner->dev->format->cqe_write(rocemu_qp_recv_cq(qp), &info);
}
