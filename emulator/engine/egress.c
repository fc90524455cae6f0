/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/engine/egress.h"

#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "emulator/observe/capture.h"
#include "emulator/core/device.h"
#include "emulator/core/emu.h"
#include "emulator/observe/fault_inject.h"
#include "emulator/observe/stats.h"
#include "emulator/observe/trace.h"
#include "net/pcap.h"
#include "net/udp_port.h"

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
		rocemu_stats_xmit_discard(dev, npkts);
		return 0;
	}
	rocemu_stats_xmit(dev, npkts, len);
	if (rocemu_tracing(dev->emu))
		rocemu_trace_packets(dev, true, flow, buf, len, gso);
	if (dev->fault && !dev->wire.send)
		return send_one_by_one(dev, fd, &to, flow, &ip, buf, len, gso ? gso : len);
	rocemu_capture_packets(dev, (struct rocemu_pcap_run){ .flow = flow, .ip = ip }, buf, len, gso);
	if (dev->wire.send)
		return dev->wire.send(dev->wire.arg, flow, buf, len, gso);
	/* Every packet built here carries its ICRC, and no fault touched it. */
	return rocemu_loop_send_vouched(dev->emu->loop, fd, &to, &iov, 1, gso);
}

void rocemu_egress_rx(struct rocemu_device *dev, uint32_t daddr, const struct rocemu_dgram *d,
		      const struct rocemu_ipv4_fields *ip)
{
	const struct rocemu_ipv4_udp flow = { .saddr = d->src.sin_addr.s_addr, .daddr = daddr,
					      .sport = d->src.sin_port,
					      .dport = htons(ROCEMU_ROCEV2_PORT) };

	rocemu_stats_rcv(dev, d->len);
	if (dev->pcap) {
		const struct rocemu_pcap_run run = {
			.flow = &flow, .ip = *ip, .udp_check_zero = d->udp_check_zero,
			/* A GRO batch has one arrival time: each next packet came one packet's time later. */
			.ns = d->rx_ns ? d->rx_ns + d->seg * rocemu_capture_packet_ps(d->len) / 1000 : 0,
		};

		rocemu_capture_packets(dev, run, d->data, d->len, 0);
	}
	if (rocemu_tracing(dev->emu))
		rocemu_trace_packets(dev, false, &flow, d->data, d->len, 0);
}

int rocemu_egress_start(struct rocemu_emu *emu, char *err, size_t errlen)
{
	const char *faults = getenv("ROCEMU_FAULTS"), *dir = getenv("ROCEMU_PCAP");
	unsigned int i;
	int ret;

	ret = rocemu_capture_configure(emu, err, errlen);
	if (ret)
		return ret;
	if (dir && *dir && mkdir(dir, 0700) && errno != EEXIST) {
		snprintf(err, errlen, "ROCEMU_PCAP: cannot create %s: %s", dir, strerror(errno));
		return -errno;
	}
	for (i = 0; i < emu->num_devices; i++) {
		struct rocemu_device *dev = &emu->devices[i];
		char why[256] = "";

		if (faults && *faults) {
			ret = rocemu_fault_inject_set(dev, faults, why, sizeof(why));
			if (ret) {
				snprintf(err, errlen, "ROCEMU_FAULTS: %s", why);
				return ret;
			}
		}
		if (dir && *dir) {
			char path[PATH_MAX];

			ret = rocemu_pcap_default_path(path, sizeof(path), dir, dev->name);
			if (!ret)
				ret = rocemu_capture_start(dev, path, why, sizeof(why));
			if (ret) {
				snprintf(err, errlen, "ROCEMU_PCAP: %s", why[0] ? why : strerror(-ret));
				return ret;
			}
		}
	}
	return 0;
}

void rocemu_egress_idle(struct rocemu_emu *emu)
{
	unsigned int i;

	for (i = 0; i < emu->num_devices; i++)
		rocemu_capture_flush(&emu->devices[i]);
}

void rocemu_egress_stop(struct rocemu_device *dev)
{
	rocemu_fault_inject_stop(dev);
	rocemu_capture_stop(dev);
}
