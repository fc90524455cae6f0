/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * A frame the port steered to a RAW_PACKET QP: dropped and counted unless
 * the QP receives (RTR, RTS) and a receive WQE is posted, in its SRQ when
 * it has one, else in its RQ (out_of_buffer, as a ConnectX counts it);
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

void rocemu_raw_rx_frame(struct rocemu_qp *qp, const struct rocemu_eth_frame *f,
			 uint32_t flow_tag)
{
	struct rocemu_device_counters *k = &qp->owner->dev->counters;
	bool strip = (qp->create_flags & IBV_QP_CREATE_CVLAN_STRIPPING) && f->vlan;
	bool scatter_fcs = qp->create_flags & IBV_QP_CREATE_SCATTER_FCS;
	struct rocemu_dma_seg remote[ROCEMU_DMA_MAX_SEGS];
	uint8_t fcs[ROCEMU_ETH_FCS_LEN];
	struct iovec local[3];
	struct rocemu_recv_wqe w;
	struct rocemu_cqe_eth eth = { .frame = f, .vlan_stripped = strip, .flow_tag = flow_tag };
	struct rocemu_cqe_info info;
	unsigned int nlocal, n;
	uint32_t len;
	int err;

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
	nlocal = frame_iov(f, strip, scatter_fcs ? fcs : NULL, local);
	len = f->len - (strip ? ROCEMU_VLAN_HLEN : 0) + (scatter_fcs ? ROCEMU_ETH_FCS_LEN : 0);
	if (len > w.length) {
		rocemu_dgram_recv_fail(qp, w.counter, IBV_WC_LOC_LEN_ERR);
		return;
	}
	err = rocemu_dma_sgl(qp->mem, w.sge, w.num_sge, 0, len, IBV_ACCESS_LOCAL_WRITE, remote,
			     ROCEMU_DMA_MAX_SEGS, &n);
	if (!err)
		err = rocemu_dma_copy(qp->owner->mm, local, nlocal, remote, n, true);
	if (err) {
		rocemu_dgram_recv_fail(qp, w.counter, err == -EMSGSIZE ? IBV_WC_LOC_LEN_ERR
								      : IBV_WC_LOC_PROT_ERR);
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
