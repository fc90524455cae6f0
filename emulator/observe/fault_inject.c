/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/observe/fault_inject.h"

#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "emulator/core/device.h"
#include "emulator/core/emu.h"
#include "rocemu/log.h"

static void counters_add(struct rocemu_fault_counters *to, const struct rocemu_fault_counters *k)
{
	to->dropped += k->dropped;
	to->duplicated += k->duplicated;
	to->reordered += k->reordered;
	to->corrupted += k->corrupted;
	to->delayed += k->delayed;
}

int rocemu_fault_inject_set(struct rocemu_device *dev, const char *spec, char *err,
			    size_t errlen)
{
	struct rocemu_fault_config cfg = { 0 };
	struct rocemu_fault *f = NULL;
	char text[ROCEMU_FAULT_TEXT_MAX];
	int ret;

	if (strcmp(spec, "off")) {
		ret = rocemu_fault_config_parse(spec, &cfg, err, errlen);
		if (ret)
			return ret;
	}
	if (rocemu_fault_config_active(&cfg)) {
		f = rocemu_fault_new(dev->emu->loop, &cfg, be32toh(dev->ipv4));
		if (!f) {
			snprintf(err, errlen, "%s: %s", dev->name, strerror(errno));
			return -errno;
		}
	}
	if (dev->fault) {
		/* Keep the totals across configurations. */
		counters_add(&dev->fault_past, rocemu_fault_counters(dev->fault));
		rocemu_fault_free(dev->fault);
	}
	dev->fault = f;
	if (rocemu_fault_config_format(&cfg, text, sizeof(text)) < 0)
		text[0] = '\0';
	rocemu_log(ROCEMU_LOG_INFO, "%s faults: %s", dev->name, text[0] ? text : "off");
	return 0;
}

int rocemu_fault_inject_send(struct rocemu_device *dev, int fd, const struct sockaddr_in *dst,
			     const uint8_t *pkt, size_t len)
{
	int ret = rocemu_fault_apply(dev->fault, fd, dst, pkt, len, rocemu_now_ns());

	return ret < 0 ? ret : 0;
}

struct rocemu_fault_counters rocemu_fault_inject_totals(const struct rocemu_device *dev)
{
	struct rocemu_fault_counters f = dev->fault_past;

	if (dev->fault)
		counters_add(&f, rocemu_fault_counters(dev->fault));
	return f;
}

void rocemu_fault_inject_stop(struct rocemu_device *dev)
{
	if (dev->fault)
		counters_add(&dev->fault_past, rocemu_fault_counters(dev->fault));
	rocemu_fault_free(dev->fault);
	dev->fault = NULL;
}
