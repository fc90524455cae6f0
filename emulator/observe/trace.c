/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/observe/trace.h"

#include <arpa/inet.h>
#include <stdio.h>

#include "emulator/core/client.h"
#include "emulator/core/device.h"
#include "emulator/ring/format.h"
#include "emulator/obj/cq.h"
#include "emulator/obj/qp.h"
#include "net/roce/roce_hdr.h"
#include "net/roce/roce_opcode.h"
#include "net/roce/roce_text.h"
#include "rocemu/ring.h"

#define NO_QP 0x01000000u	/* above every 24-bit QPN: matches no filter */

/* The local QP that sends along flow to destqp: RC pairs each have a source port of their own. */
static uint32_t sender_qpn(const struct rocemu_device *dev, const struct rocemu_ipv4_udp *flow,
			   uint32_t destqp)
{
	struct rocemu_client *c;
	struct rocemu_qp *qp;

	rocemu_list_for_each(c, &dev->emu->clients, struct rocemu_client, node) {
		if (c->dev != dev)
			continue;
		rocemu_list_for_each(qp, &c->qps, struct rocemu_qp, node)
			if (qp->path.flow.sport == flow->sport && qp->path.flow.daddr == flow->daddr &&
			    qp->attr.dest_qp_num == destqp)
				return qp->qpn;
	}
	return NO_QP;
}

static void trace_packet(struct rocemu_device *dev, bool sent, const struct rocemu_ipv4_udp *flow,
			 const uint8_t *pkt, size_t len)
{
	const struct rocemu_opcode_info *info = len >= ROCEMU_BTH_BYTES ?
		rocemu_opcode_info(rocemu_bth_opcode(pkt)) : NULL;
	ssize_t paylen = info ? rocemu_pkt_payload_len(pkt, len) : -1;
	struct rocemu_trace_event ev = { .dev = dev, .kind = ROCEMU_TRACE_PACKET,
					 .qpn = { NO_QP, NO_QP } };
	char src[INET_ADDRSTRLEN], dst[INET_ADDRSTRLEN], extra[64] = "";
	const char *icrc = "";

	inet_ntop(AF_INET, &flow->saddr, src, sizeof(src));
	inet_ntop(AF_INET, &flow->daddr, dst, sizeof(dst));
	if (!sent && rocemu_icrc_check_v4(flow, pkt, len, NULL))
		icrc = " ICRC bad";
	if (paylen < 0) {
		rocemu_trace_emit(&ev, "%s %s:%u > %s malformed, %zu bytes%s", sent ? "tx" : "rx",
				  src, ntohs(flow->sport), dst, len, icrc);
		return;
	}
	ev.qpn[0] = rocemu_bth_destqp(pkt);
	if (sent && rocemu_trace_any_qp_filter(dev->emu))
		ev.qpn[1] = sender_qpn(dev, flow, ev.qpn[0]);
	if (info->hdr_mask & ROCEMU_HDRM_AETH)
		rocemu_aeth_text(rocemu_aeth_syndrome(pkt + info->offset[ROCEMU_HDR_AETH]), extra,
				 sizeof(extra));
	else if (ev.qpn[0] == ROCEMU_GSI_QPN)
		snprintf(extra, sizeof(extra), "CM %s",
			 rocemu_cm_attr_name(rocemu_mad_attr(pkt + info->length, (size_t)paylen)));
	else if (info->hdr_mask & ROCEMU_HDRM_DETH)
		snprintf(extra, sizeof(extra), "src QP 0x%06x",
			 rocemu_deth_src_qp(pkt + info->offset[ROCEMU_HDR_DETH]));
	rocemu_trace_emit(&ev, "%s %s:%u > %s QP 0x%06x %s PSN %u %zd B%s%s%s", sent ? "tx" : "rx",
			  src, ntohs(flow->sport), dst, ev.qpn[0], info->name, rocemu_bth_psn(pkt),
			  paylen, extra[0] ? " " : "", extra, icrc);
}

void rocemu_trace_packets(struct rocemu_device *dev, bool sent, const struct rocemu_ipv4_udp *flow,
			  const uint8_t *buf, size_t len, size_t seg)
{
	size_t off, n;

	if (!seg)
		seg = len;
	for (off = 0; off < len; off += seg) {
		n = len - off < seg ? len - off : seg;
		trace_packet(dev, sent, flow, buf + off, n);
	}
}

/* A receive completion as traces name it, whatever the ring format. */
static const char *const recv_names[] = {
	[ROCEMU_CQE_RECV_SEND] = "RESP_SEND",
	[ROCEMU_CQE_RECV_SEND_IMM] = "RESP_SEND_IMM",
	[ROCEMU_CQE_RECV_SEND_INV] = "RESP_SEND_INV",
	[ROCEMU_CQE_RECV_WRITE_IMM] = "RESP_WR_IMM",
};

void rocemu_trace_cqe(const struct rocemu_cq *cq, const struct rocemu_cqe_info *info,
		      uint8_t syndrome)
{
	struct rocemu_trace_event ev = { .dev = cq->owner->dev, .kind = ROCEMU_TRACE_CQE,
					 .qpn = { info->qpn, info->qpn } };

	if (rocemu_cqe_kind_error(info->kind))
		rocemu_trace_emit(&ev, "cqe cq 0x%x qp 0x%06x %s wqe %u: %s (syndrome 0x%02x)",
				  cq->cqn, info->qpn, info->kind == ROCEMU_CQE_SEND_ERR ? "send" : "recv",
				  info->wqe_counter,
				  rocemu_cqe_error_text(rocemu_cqe_syndrome_of(info->status)), syndrome);
	else if (info->kind == ROCEMU_CQE_SEND_DONE)
		rocemu_trace_emit(&ev, "cqe cq 0x%x qp 0x%06x send wqe %u %s: success", cq->cqn,
				  info->qpn, info->wqe_counter,
				  rocemu_ring_wqe_op(cq->owner->dev->format, info->wqe_opcode)->name);
	else
		rocemu_trace_emit(&ev, "cqe cq 0x%x qp 0x%06x recv %s %u B: success", cq->cqn,
				  info->qpn, recv_names[info->kind], info->byte_cnt);
}
