/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/rx.h"

#include <arpa/inet.h>

#include "emulator/doorbell.h"
#include "emulator/egress.h"
#include "emulator/emu.h"
#include "emulator/qp.h"
#include "emulator/rc.h"
#include "net/roce_hdr.h"
#include "net/udp_port.h"
#include "rocemu/log.h"

static void rx_drop(struct rocemu_device *dev, const struct rocemu_dgram *d, const char *why)
{
	char src[INET_ADDRSTRLEN];

	dev->rx_dropped++;
	if (rocemu_log_enabled(ROCEMU_LOG_DEBUG))
		rocemu_log(ROCEMU_LOG_DEBUG, "%s rx drop %zu bytes from %s:%u: %s", dev->name, d->len,
			   inet_ntop(AF_INET, &d->src.sin_addr, src, sizeof(src)),
			   ntohs(d->src.sin_port), why);
}

void rocemu_rx_datagram(struct rocemu_device *dev, const struct rocemu_dgram *d)
{
	const struct rocemu_ipv4_udp flow = { .saddr = d->src.sin_addr.s_addr, .daddr = dev->ipv4,
					      .sport = d->src.sin_port,
					      .dport = htons(ROCEMU_ROCEV2_PORT) };
	struct rocemu_rc_pkt pkt = { .dev = dev, .bth = d->data };
	struct rocemu_qp *qp;
	ssize_t paylen;

	dev->rx_datagrams++;
	/* A port that is down has no link: nothing arrives. */
	if (dev->port_state != IBV_PORT_ACTIVE) {
		rx_drop(dev, d, "port down");
		return;
	}
	rocemu_egress_rx(dev, d);
	rocemu_doorbell_awake(dev->emu);
	if (rocemu_icrc_check_v4(&flow, d->data, d->len)) {
		dev->rx_icrc_errors++;
		rx_drop(dev, d, "bad ICRC");
		return;
	}
	paylen = rocemu_pkt_payload_len(d->data, d->len);
	if (paylen < 0) {
		rx_drop(dev, d, "malformed");
		return;
	}
	pkt.opcode = rocemu_bth_opcode(d->data);
	pkt.info = rocemu_opcode_info(pkt.opcode);
	pkt.psn = rocemu_bth_psn(d->data);
	pkt.payload = d->data + pkt.info->length;
	pkt.paylen = (uint32_t)paylen;
	if (!(pkt.info->flags & ROCEMU_OPF_RC)) {
		rx_drop(dev, d, "not RC");
		return;
	}
	qp = rocemu_idtable_get(&dev->emu->qps, rocemu_bth_destqp(d->data));
	if (!qp || qp->owner->dev != dev || qp->type != IBV_QPT_RC) {
		rx_drop(dev, d, "no such QP");
		return;
	}
	if (rocemu_log_enabled(ROCEMU_LOG_DEBUG))
		rocemu_log(ROCEMU_LOG_DEBUG, "%s qp 0x%06x psn 0x%06x rx %s len %u%s", dev->name,
			   qp->qpn, pkt.psn, pkt.info->name, pkt.paylen,
			   rocemu_bth_ackreq(d->data) ? " ackreq" : "");
	if (pkt.info->flags & ROCEMU_OPF_REQ)
		rocemu_rc_resp_packet(qp, &pkt);
	else
		rocemu_rc_comp_packet(qp, &pkt);
}
