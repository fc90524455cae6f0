/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/observe/tap.h"

#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "emulator/core/device.h"
#include "emulator/core/emu.h"
#include "emulator/observe/capture.h"
#include "emulator/observe/fault_inject.h"
#include "emulator/observe/trace.h"
#include "net/observe/pcap.h"
#include "net/udp/udp_port.h"

void rocemu_tap_rx(struct rocemu_device *dev, uint32_t daddr, const struct rocemu_dgram *d,
		   const struct rocemu_ipv4_fields *ip)
{
	const struct rocemu_ipv4_udp flow = { .saddr = d->src.sin_addr.s_addr, .daddr = daddr,
					      .sport = d->src.sin_port,
					      .dport = htons(ROCEMU_ROCEV2_PORT) };

	dev->counters.port_rcv_packets++;
	dev->counters.port_rcv_data += d->len / ROCEMU_PORT_DATA_WORD;
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
	if (dev->sniffers)
		dev->emu->roce_sniff(dev, &flow, ip, d->data, d->len, 0);
}

int rocemu_tap_start(struct rocemu_emu *emu, char *err, size_t errlen)
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

void rocemu_tap_idle(struct rocemu_emu *emu)
{
	unsigned int i;

	for (i = 0; i < emu->num_devices; i++)
		rocemu_capture_flush(&emu->devices[i]);
}

void rocemu_tap_stop(struct rocemu_device *dev)
{
	rocemu_fault_inject_stop(dev);
	rocemu_capture_stop(dev);
}
