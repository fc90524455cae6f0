/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/engine/rx.h"

#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>

#include "emulator/cm/cm.h"
#include "emulator/core/emu.h"
#include "emulator/core/sport.h"
#include "emulator/engine/mcast.h"
#include "emulator/engine/transport.h"
#include "emulator/obj/qp.h"
#include "emulator/observe/tap.h"
#include "emulator/sched/idle.h"
#include "net/roce/roce_hdr.h"
#include "net/udp/udp_port.h"
#include "rocemu/log.h"

/* Count a datagram dropped; the debug log says why (printf-style). */
__attribute__((format(printf, 3, 4)))
static void rx_drop(struct rocemu_device *dev, const struct rocemu_dgram *d, const char *why, ...)
{
	char src[INET_ADDRSTRLEN], text[128];
	va_list ap;

	dev->rx_dropped++;
	if (!rocemu_log_enabled(ROCEMU_LOG_DEBUG))
		return;
	va_start(ap, why);
	vsnprintf(text, sizeof(text), why, ap);
	va_end(ap);
	rocemu_log(ROCEMU_LOG_DEBUG, "%s rx drop %zu bytes from %s:%u: %s", dev->name, d->len,
		   inet_ntop(AF_INET, &d->src.sin_addr, src, sizeof(src)), ntohs(d->src.sin_port),
		   text);
}

void rocemu_rx_datagram(struct rocemu_device *dev, const struct rocemu_dgram *d)
{
	rocemu_rx_datagram_to(dev, dev->ipv4, d);
}

/*
 * An ID the sender can have written. RoCE NICs and rxe send UDP checksum 0
 * and IDs of their own; a datagram with a checksum (udp_port.c tells them
 * apart, on the device's own address) comes from a host's unconnected UDP
 * socket, a daemon's, whose IDs are those of a GSO send
 * (rocemu_ipv4_send_id): holding its ICRC to them keeps damage that
 * another ID would explain at 1 in 2^26, not 2^16.
 */
static bool id_plausible(const struct rocemu_device *dev, uint32_t daddr,
			 const struct rocemu_dgram *d, const struct rocemu_ipv4_fields *ip)
{
	bool summed = !d->udp_check_zero &&
		      (d->ip_known || (dev->udp_fd_unsummed >= 0 && daddr == dev->ipv4));

	return !summed || (ip->df && ip->id < ROCEMU_IPV4_SEND_IDS);
}

/*
 * A datagram the kernel handed over that claims a device of this daemon as
 * its sender came from one of that device's sockets, or from another
 * process (any local user may bind the address on a port of its own).
 */
static bool source_forged(struct rocemu_emu *emu, const struct rocemu_dgram *d)
{
	struct rocemu_device *from;

	if (d->vouched)
		return false;
	from = rocemu_emu_device_by_ipv4(emu, d->src.sin_addr.s_addr);
	return from && !rocemu_sport_held(from, ntohs(d->src.sin_port));
}

static void rx_dispatch(struct rocemu_device *dev, uint32_t daddr, const struct rocemu_dgram *d)
{
	const struct rocemu_ipv4_udp flow = { .saddr = d->src.sin_addr.s_addr, .daddr = daddr,
					      .sport = d->src.sin_port,
					      .dport = htons(ROCEMU_ROCEV2_PORT) };
	struct rocemu_pkt pkt = { .dev = dev, .bth = d->data, .ip = d->ip };
	const struct rocemu_transport_ops *transport;
	struct rocemu_qp *qp;
	ssize_t paylen;
	bool bad_icrc;

	dev->rx_datagrams++;
	/* A port that is down has no link: nothing arrives. */
	if (dev->port_state != IBV_PORT_ACTIVE) {
		rx_drop(dev, d, "port down");
		return;
	}
	/* Until the ICRC tells the sender's ID, what a RoCEv2 sender writes: DF, ID 0. */
	if (!d->ip_known)
		pkt.ip.df = true;
	/* Handed over inside the daemon, untouched since its sender computed the ICRC: it is right. */
	bad_icrc = !d->vouched && (rocemu_icrc_check_v4(&flow, d->data, d->len, &pkt.ip) ||
				   !id_plausible(dev, daddr, d, &pkt.ip));
	rocemu_tap_rx(dev, daddr, d, &pkt.ip);
	rocemu_idle_awake(dev->emu);
	if (bad_icrc) {
		dev->rx_icrc_errors++;
		rx_drop(dev, d, "bad ICRC");
		return;
	}
	if (dev->emu && source_forged(dev->emu, d)) {
		dev->rx_forged_source++;
		rx_drop(dev, d, "a device of this daemon's address, from a port it does not hold");
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
	pkt.saddr = d->src.sin_addr.s_addr;
	pkt.daddr = daddr;
	pkt.len = (uint32_t)d->len;
	/* The opcode's class names its transport (IBTA 9.2.1). */
	transport = rocemu_transport_of_opcode(pkt.opcode);
	if (!transport) {
		rx_drop(dev, d, "%s packet: no such transport", rocemu_op_transport_name(pkt.opcode));
		return;
	}
	/* QPN 0xFFFFFF is the groups', and a group's packets are UD to it (IBTA 10.5.2.2). */
	if (daddr != dev->ipv4 || rocemu_bth_destqp(d->data) == ROCEMU_MCAST_QPN) {
		if (daddr == dev->ipv4 || rocemu_bth_destqp(d->data) != ROCEMU_MCAST_QPN ||
		    transport != &rocemu_ud_transport) {
			rx_drop(dev, d, "multicast is UD to QPN 0xffffff at a group address");
			return;
		}
		rocemu_mcast_rx(dev, &pkt);
		return;
	}
	/* QP1 is the CM's (IBTA 13.5.1): its MADs go to cm/, not to a QP of a client. */
	if (rocemu_bth_destqp(d->data) == CM_GSI_QPN && transport == &rocemu_ud_transport) {
		rocemu_cm_rx(dev, &pkt);
		return;
	}
	qp = rocemu_idtable_get(&dev->emu->qps, rocemu_bth_destqp(d->data));
	if (!qp || qp->owner->dev != dev) {
		dev->rx_no_qp++;
		rx_drop(dev, d, "no such QP");
		return;
	}
	if (qp->ops != transport) {
		rx_drop(dev, d, "%s packet for %s QP 0x%06x", transport->name, qp->ops->name, qp->qpn);
		return;
	}
	if (transport->connected && d->src.sin_addr.s_addr != qp->path.flow.daddr) {
		rx_drop(dev, d, "not from the peer of QP 0x%06x", qp->qpn);
		return;
	}
	if (rocemu_log_enabled(ROCEMU_LOG_DEBUG))
		rocemu_log(ROCEMU_LOG_DEBUG, "%s qp 0x%06x psn 0x%06x rx %s len %u%s", dev->name,
			   qp->qpn, pkt.psn, pkt.info->name, pkt.paylen,
			   rocemu_bth_ackreq(d->data) ? " ackreq" : "");
	transport->rx(qp, &pkt);
}

void rocemu_rx_datagram_to(struct rocemu_device *dev, uint32_t daddr, const struct rocemu_dgram *d)
{
	rx_dispatch(dev, daddr, d);
	if (!d->more)
		rocemu_transport_rx_buffer_end();
}
