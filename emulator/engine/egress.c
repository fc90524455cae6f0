/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/engine/egress.h"

#include <netinet/in.h>
#include <string.h>

#include "emulator/core/device.h"
#include "emulator/core/emu.h"
#include "emulator/observe/capture.h"
#include "emulator/observe/fault_inject.h"
#include "emulator/observe/trace.h"

/*
 * The injector sends each packet as a datagram of its own, to which the
 * kernel gives the ID of a first one: a packet made for a later place in a
 * GSO send has its ICRC moved to that ID, then is captured and sent.
 */
static int send_one_by_one(struct rocemu_device *dev, int fd, const struct sockaddr_in *to,
			   const struct rocemu_ipv4_udp *flow, const struct rocemu_ipv4_fields *ip,
			   const uint8_t *buf, size_t len, size_t seg)
{
	static uint8_t pkt[ROCEMU_LOOP_MAX_DGRAM];
	unsigned int k = 0;
	size_t off, n;
	int err = 0, ret;

	for (off = 0; off < len; off += n, k++) {
		n = len - off < seg ? len - off : seg;
		memcpy(pkt, buf + off, n);
		rocemu_icrc_move_id(pkt, n, rocemu_ipv4_send_id(k), rocemu_ipv4_send_id(0));
		rocemu_capture_packets(dev, (struct rocemu_pcap_run){ .flow = flow, .ip = *ip }, pkt, n,
				       0);
		ret = rocemu_fault_inject_send(dev, fd, to, pkt, n);
		if (ret)
			err = ret;
	}
	return err;
}

int rocemu_egress_send(struct rocemu_device *dev, int fd, const struct rocemu_ipv4_udp *flow,
		       const void *buf, size_t len, uint16_t gso)
{
	const struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = flow->dport,
					.sin_addr.s_addr = flow->daddr };
	const struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	uint64_t npkts = gso ? (len + gso - 1) / gso : 1;
	/* What the kernel writes around them; the IDs count from the first (rocemu_ipv4_send_id). */
	const struct rocemu_ipv4_fields ip = {
		.id = rocemu_ipv4_send_id(0), .df = true,
		.ttl = IN_MULTICAST(ntohl(flow->daddr)) ? dev->wire_mcast_ttl : dev->wire_ttl,
	};

	/* A port that is down has no link: the packets are lost, as on the wire. */
	if (dev->port_state != IBV_PORT_ACTIVE) {
		dev->counters.port_xmit_discards += npkts;
		return 0;
	}
	dev->counters.port_xmit_packets += npkts;
	dev->counters.port_xmit_data += len / ROCEMU_PORT_DATA_WORD;
	if (rocemu_tracing(dev->emu))
		rocemu_trace_packets(dev, true, flow, buf, len, gso);
	if (dev->sniffers)
		dev->emu->roce_sniff(dev, flow, &ip, buf, len, gso);
	if (dev->fault && !dev->wire.send)
		return send_one_by_one(dev, fd, &to, flow, &ip, buf, len, gso ? gso : len);
	/* Checked here: a device without a capture sends without a call into capture.c. */
	if (dev->pcap)
		rocemu_capture_packets(dev, (struct rocemu_pcap_run){ .flow = flow, .ip = ip }, buf,
				       len, gso);
	if (dev->wire.send)
		return dev->wire.send(dev->wire.arg, flow, buf, len, gso);
	/* Every packet built here carries its ICRC, and no fault touched it. */
	return rocemu_loop_send_vouched(dev->emu->loop, fd, &to, &iov, 1, gso);
}
