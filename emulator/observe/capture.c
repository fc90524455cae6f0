/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/observe/capture.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emulator/core/device.h"
#include "emulator/core/emu.h"
#include "net/observe/pcap.h"
#include "rocemu/log.h"

int rocemu_capture_configure(struct rocemu_emu *emu, char *err, size_t errlen)
{
	const char *text = getenv("ROCEMU_PCAP_SNAPLEN");

	emu->pcap_snaplen = ROCEMU_PCAP_SNAPLEN_DEFAULT;
	if (text && *text && rocemu_pcap_snaplen_parse(text, &emu->pcap_snaplen)) {
		snprintf(err, errlen, "ROCEMU_PCAP_SNAPLEN: '%.64s' is not a snap length "
			 "(bytes from 1 to %u, or 0 for whole frames)", text, ROCEMU_PCAP_SNAPLEN_MAX);
		return -EINVAL;
	}
	return 0;
}

int rocemu_capture_start(struct rocemu_device *dev, const char *path, char *err, size_t errlen)
{
	int ret;

	if (dev->pcap) {
		snprintf(err, errlen, "%s already captures to %s", dev->name, dev->pcap_path);
		return -EBUSY;
	}
	if (strlen(path) >= sizeof(dev->pcap_path)) {
		snprintf(err, errlen, "capture file name too long");
		return -ENAMETOOLONG;
	}
	dev->pcap = rocemu_pcap_open(path, dev->emu->pcap_snaplen);
	if (!dev->pcap) {
		ret = -errno;
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		return ret;
	}
	snprintf(dev->pcap_path, sizeof(dev->pcap_path), "%s", path);
	rocemu_log(ROCEMU_LOG_INFO, "%s capture to %s", dev->name, path);
	return 0;
}

const char *rocemu_capture_path(const struct rocemu_device *dev)
{
	return dev->pcap ? dev->pcap_path : NULL;
}

/* A bit's time on the port, 4X lanes of 25 Gb/s as ibv_query_port says: 100 Gb/s. */
#define PORT_BIT_PS 10

uint64_t rocemu_capture_packet_ps(size_t len)
{
	return rocemu_pcap_frame_ps(len, PORT_BIT_PS);
}

/* A failed write stops the capture with a log line. */
static void capture_written(struct rocemu_device *dev, int err)
{
	if (!err)
		return;
	rocemu_log(ROCEMU_LOG_WARN, "%s: capture stopped: %s", dev->name, strerror(-err));
	rocemu_capture_stop(dev);
}

void rocemu_capture_packets(struct rocemu_device *dev, struct rocemu_pcap_run run,
			    const uint8_t *buf, size_t len, size_t seg)
{
	if (!dev->pcap)
		return;
	run.bit_ps = PORT_BIT_PS;
	capture_written(dev, rocemu_pcap_write(dev->pcap, &run, buf, len, seg));
}

void rocemu_capture_frame(struct rocemu_device *dev, const uint8_t *frame, size_t len)
{
	if (dev->pcap)
		capture_written(dev, rocemu_pcap_write_frame(dev->pcap, frame, len));
}

void rocemu_capture_flush(struct rocemu_device *dev)
{
	if (dev->pcap)
		rocemu_pcap_flush(dev->pcap);
}

void rocemu_capture_stop(struct rocemu_device *dev)
{
	if (!dev->pcap)
		return;
	rocemu_pcap_close(dev->pcap);
	dev->pcap = NULL;
	rocemu_log(ROCEMU_LOG_INFO, "%s capture to %s stopped", dev->name, dev->pcap_path);
}
