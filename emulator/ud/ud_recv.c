/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * A UD datagram arriving: dropped and counted unless the QP receives
 * (RTR, RTS, SQD), the Q_Key matches (IBTA C10-15) and a receive WQE is
 * posted, in the QP's SRQ when it has one, else in its RQ; then the WQE
 * takes the 40-byte GRH as a ConnectX writes it for RoCEv2 over IPv4 (20
 * zero bytes, then the IPv4 header) followed by the payload, and the CQE
 * says GRH, the source QP and the immediate.
 */
#include <errno.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <string.h>

#include "emulator/ring/format.h"
#include "emulator/engine/dgram_qp.h"
#include "emulator/engine/recv_wqe.h"
#include "emulator/engine/transport.h"
#include "emulator/mem/dma.h"
#include "emulator/obj/qp.h"
#include "emulator/ud/ud.h"
#include "net/observe/pcap.h"
#include "net/roce/roce_hdr.h"
#include "net/udp/udp_port.h"
#include "rocemu/log.h"

#define GRH_BYTES 40
#define GRH_IPV4_OFFSET (GRH_BYTES - sizeof(struct iphdr))

static bool ud_receives(const struct rocemu_qp *qp)
{
	return qp->attr.qp_state == IBV_QPS_RTR || qp->attr.qp_state == IBV_QPS_RTS ||
	       qp->attr.qp_state == IBV_QPS_SQD;
}

/* Count a datagram the QP does not take; the debug log says why. */
static void ud_drop(struct rocemu_qp *qp, uint64_t *counter, const char *why)
{
	(*counter)++;
	rocemu_log(ROCEMU_LOG_DEBUG, "%s qp 0x%06x rx UD drop: %s", qp->owner->dev->name, qp->qpn,
		   why);
}

/* GRH and payload into receive WQE w; 0 or -errno of the DMA. */
static int scatter(struct rocemu_qp *qp, const struct rocemu_recv_wqe *w,
		   const struct rocemu_pkt *pkt)
{
	const struct rocemu_ipv4_udp flow = { .saddr = pkt->saddr, .daddr = pkt->daddr };
	uint8_t grh[GRH_BYTES] = { 0 };
	struct iovec local[2] = { { grh, GRH_BYTES }, { (void *)pkt->payload, pkt->paylen } };
	struct rocemu_dma_seg remote[ROCEMU_DMA_MAX_SEGS];
	struct iphdr ip;
	unsigned int n;
	int err;

	rocemu_ipv4_header(&ip, &flow, &pkt->ip, pkt->len);
	memcpy(grh + GRH_IPV4_OFFSET, &ip, sizeof(ip));
	err = rocemu_dma_sgl(qp->mem, w->sge, w->num_sge, 0,
			     GRH_BYTES + pkt->paylen, IBV_ACCESS_LOCAL_WRITE, remote,
			     ROCEMU_DMA_MAX_SEGS, &n);
	return err ? err : rocemu_dma_copy(qp->owner->mm, local, pkt->paylen ? 2 : 1, remote, n,
					   true);
}

void rocemu_ud_recv(struct rocemu_qp *qp, const struct rocemu_pkt *pkt)
{
	struct rocemu_device_counters *k = &qp->owner->dev->counters;
	const uint8_t *deth = pkt->bth + pkt->info->offset[ROCEMU_HDR_DETH];
	bool imm = pkt->info->flags & ROCEMU_OPF_IMM;
	struct rocemu_recv_wqe w;
	struct rocemu_cqe_info info;
	int err;

	if (!ud_receives(qp)) {
		ud_drop(qp, &k->rx_ud_dropped, "not receiving");
		return;
	}
	if (rocemu_deth_qkey(deth) != qp->attr.qkey) {
		ud_drop(qp, &k->rx_qkey_violations, "Q_Key mismatch");
		return;
	}
	/* The SRQ's limit event comes with the WQE that takes it below the limit. */
	err = rocemu_recv_wqe_next(qp, &qp->ud->rq_ci, &w);
	if (err == -EINVAL) {
		rocemu_dgram_qp_fatal(qp);
		return;
	}
	if (err) {
		/* UD has no RNR NAK: a ConnectX drops the datagram and counts it, as here. */
		ud_drop(qp, &k->out_of_buffer, "no receive posted");
		return;
	}
	if (GRH_BYTES + (uint64_t)pkt->paylen > w.length) {
		rocemu_dgram_recv_fail(qp, w.counter, IBV_WC_LOC_LEN_ERR);
		return;
	}
	err = scatter(qp, &w, pkt);
	if (err) {
		rocemu_dgram_recv_fail(qp, w.counter, err == -EMSGSIZE ?
				    IBV_WC_LOC_LEN_ERR : IBV_WC_LOC_PROT_ERR);
		return;
	}
	info = (struct rocemu_cqe_info){
		.kind = imm ? ROCEMU_CQE_RECV_SEND_IMM : ROCEMU_CQE_RECV_SEND,
		.qpn = qp->qpn,
		.wqe_counter = (uint16_t)w.counter,
		.byte_cnt = GRH_BYTES + pkt->paylen,
		.src_qp = rocemu_deth_src_qp(deth),
		.srqn = rocemu_qp_recv_srqn(qp),
		.grh_ipv4 = true,
		.solicited = rocemu_bth_se(pkt->bth),
	};
	if (imm)
		memcpy(&info.imm, pkt->bth + pkt->info->offset[ROCEMU_HDR_IMMDT], sizeof(info.imm));
	qp->owner->dev->format->cqe_write(rocemu_qp_recv_cq(qp), &info);
}
