/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * What UD puts on the wire: one "UD Send Only" datagram per send WQE
 * (BTH, DETH with the Q_Key and our source QPN, ImmDt, payload, ICRC) to the
 * address its datagram segment names, from the UDP source port the AV
 * names. A message over the port MTU, an opcode UD does not have
 * or an unusable AV fail the WQE with an error CQE, as on a ConnectX.
 */
#include <errno.h>
#include <string.h>

#include "emulator/core/sport.h"
#include "emulator/engine/dgram_qp.h"
#include "emulator/engine/egress.h"
#include "emulator/engine/transport.h"
#include "emulator/engine/wqe_gather.h"
#include "emulator/mem/dma.h"
#include "emulator/obj/qp.h"
#include "emulator/ud/ud.h"
#include "net/roce/roce_hdr.h"
#include "net/udp/udp_port.h"
#include "rocemu/log.h"

#define ROCE_PKEY_DEFAULT 0xffff
#define PRIVILEGED_QKEY 0x80000000u	/* IBTA 10.2.4: take the QP's own Q_Key */
#define UD_PKT_MAX (ROCEMU_BTH_BYTES + ROCEMU_DETH_BYTES + ROCEMU_IMMDT_BYTES + 4096 + 3 + \
		    ROCEMU_ICRC_BYTES)

static const uint8_t ipv4_mapped_prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

/* One datagram is built here: the daemon is single-threaded. */
static uint8_t stage[UD_PKT_MAX];

/* Headers of w's datagram at stage; returns their length. */
static size_t headers_fill(const struct rocemu_qp *qp, const struct rocemu_send_wqe *w)
{
	bool imm = rocemu_ring_wqe_op(qp->owner->dev->format, w->opcode)->flags & ROCEMU_WQE_OP_IMM;
	uint8_t opcode = imm ? ROCEMU_OP_UD_SEND_ONLY_WITH_IMMEDIATE : ROCEMU_OP_UD_SEND_ONLY;
	const struct rocemu_opcode_info *info = rocemu_opcode_info(opcode);
	uint32_t qkey = w->dest.qkey;
	uint8_t *h;

	memset(stage, 0, info->length);
	rocemu_bth_set_opcode(stage, opcode);
	rocemu_bth_set_se(stage, w->solicited);
	rocemu_bth_set_padcnt(stage, rocemu_pad_bytes(w->length));
	rocemu_bth_set_tver(stage, ROCEMU_BTH_TVER);
	rocemu_bth_set_pkey(stage, ROCE_PKEY_DEFAULT);
	rocemu_bth_set_destqp(stage, w->dest.dqpn);
	rocemu_bth_set_psn(stage, qp->ud->psn);
	h = rocemu_pkt_deth(stage);
	rocemu_deth_set_qkey(h, qkey & PRIVILEGED_QKEY ? qp->attr.qkey : qkey);
	rocemu_deth_set_src_qp(h, qp->source_qpn);
	if ((h = rocemu_pkt_immdt(stage)))
		memcpy(h, &w->imm, sizeof(w->imm));
	return info->length;
}

/* The payload of w into stage at off: its inline bytes, then a gather by DMA. */
static int payload_gather(const struct rocemu_qp *qp, const struct rocemu_send_wqe *w, size_t off)
{
	struct iovec local = { stage + off, w->length };

	return w->length ? rocemu_wqe_gather(qp, w, 0, w->length, &local, 1) : 0;
}

/* Send w; IBV_WC_SUCCESS or the status it fails with. */
static enum ibv_wc_status send_wqe(struct rocemu_qp *qp, const struct rocemu_send_wqe *w)
{
	struct rocemu_device *dev = qp->owner->dev;
	struct rocemu_ipv4_udp flow = { .saddr = dev->ipv4, .dport = htons(ROCEMU_ROCEV2_PORT) };
	size_t hdr, len;
	uint16_t sport;
	int fd, err;

	/* UD messages are single packets: at most the port's MTU (IBTA 9.8.3.1). */
	if (w->length > rocemu_mtu_bytes(dev->active_mtu))
		return IBV_WC_LOC_LEN_ERR;
	if (memcmp(w->dest.rgid, ipv4_mapped_prefix, sizeof(ipv4_mapped_prefix)))
		return IBV_WC_LOC_QP_OP_ERR;
	memcpy(&flow.daddr, w->dest.rgid + 12, sizeof(flow.daddr));
	hdr = headers_fill(qp, w);
	err = payload_gather(qp, w, hdr);
	if (err)
		return err == -EMSGSIZE ? IBV_WC_LOC_LEN_ERR
					: IBV_WC_LOC_PROT_ERR;
	len = hdr + w->length;
	memset(stage + len, 0, rocemu_pad_bytes(w->length));
	len += rocemu_pad_bytes(w->length);
	fd = rocemu_sport_get_port(dev, w->dest.udp_sport, qp->qpn, &sport);
	flow.sport = htons(sport);
	len = rocemu_icrc_append_v4(&flow, stage, len, rocemu_ipv4_send_id(0));
	if (rocemu_log_enabled(ROCEMU_LOG_DEBUG))
		rocemu_log(ROCEMU_LOG_DEBUG, "%s qp 0x%06x psn 0x%06x tx %s len %u to qp 0x%06x",
			   dev->name, qp->qpn, qp->ud->psn, rocemu_opcode_name(stage[0]), w->length,
			   rocemu_bth_destqp(stage));
	err = rocemu_egress_send(dev, fd, &flow, stage, len, 0);
	rocemu_sport_put(dev, sport);
	if (err)	/* lost on the way, as a datagram may be: not the sender's error */
		rocemu_log(ROCEMU_LOG_WARN, "%s qp 0x%06x: send of %zu bytes failed: %s",
			   dev->name, qp->qpn, len, strerror(-err));
	qp->ud->psn = rocemu_psn_add(qp->ud->psn, 1);
	return 0;
}

void rocemu_ud_send_run(struct rocemu_qp *qp)
{
	struct rocemu_ud *ud = qp->ud;
	struct rocemu_send_wqe w;
	enum ibv_wc_status status;
	int posted;

	if (qp->attr.qp_state != IBV_QPS_RTS)
		return;
	/* Read once: a run takes at most one ring of WQEs. */
	posted = qp->owner->dev->format->sq_posted(qp, ud->sq_bb);
	if (posted < 0) {
		rocemu_sq_broken_log(qp, ud->psn, ud->sq_bb);
		rocemu_dgram_qp_fatal(qp);
		return;
	}
	while (qp->attr.qp_state == IBV_QPS_RTS && posted > 0) {
		int err = qp->owner->dev->format->parse_send(qp, ud->sq_bb, (uint32_t)posted, &w);

		ud->sq_bb += w.bbs;
		posted -= (int)w.bbs;
		status = err ? IBV_WC_LOC_QP_OP_ERR : send_wqe(qp, &w);
		rocemu_dgram_complete_send(qp, &w, status);
	}
}
