/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/capture.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "emulator/device.h"
#include "net/pcap.h"
#include "rocemu/log.h"

int rocemu_capture_start(struct rocemu_device *dev, const char *dir, char *err, size_t errlen)
{
	char path[PATH_MAX];
	int ret = rocemu_pcap_default_path(path, sizeof(path), dir, dev->name);

	if (ret) {
		snprintf(err, errlen, "ROCEMU_PCAP: %s", strerror(-ret));
		return ret;
	}
	dev->pcap = rocemu_pcap_open(path);
	if (!dev->pcap) {
		ret = -errno;
		snprintf(err, errlen, "ROCEMU_PCAP: cannot write %s: %s", path, strerror(errno));
		return ret;
	}
	rocemu_log(ROCEMU_LOG_INFO, "%s capture to %s", dev->name, path);
	return 0;
}

void rocemu_capture_packets(struct rocemu_device *dev, const struct rocemu_ipv4_udp *flow,
			    const uint8_t *buf, size_t len, size_t seg)
{
	size_t off, n;
	int err;

	if (!seg)
		seg = len;
	for (off = 0; dev->pcap && off < len; off += seg) {
		n = len - off < seg ? len - off : seg;
		err = rocemu_pcap_write(dev->pcap, flow, buf + off, n);
		if (err) {
			rocemu_log(ROCEMU_LOG_WARN, "%s: capture stopped: %s", dev->name,
				   strerror(-err));
			rocemu_capture_stop(dev);
		}
	}
}

void rocemu_capture_flush(struct rocemu_device *dev)
{
	if (dev->pcap)
		rocemu_pcap_flush(dev->pcap);
}

void rocemu_capture_stop(struct rocemu_device *dev)
{
	rocemu_pcap_close(dev->pcap);
	dev->pcap = NULL;
}
