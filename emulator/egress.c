/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/egress.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "emulator/device.h"
#include "emulator/emu.h"
#include "net/fault.h"
#include "net/pcap.h"
#include "net/udp_port.h"
#include "rocemu/log.h"

/* IB counts port data in 4-byte words. */
#define PORT_DATA_WORD 4

static void capture(struct rocemu_device *dev, const struct rocemu_ipv4_udp *flow,
		    const uint8_t *pkt, size_t len)
{
	int err = rocemu_pcap_write(dev->pcap, flow, pkt, len);

	if (err) {
		rocemu_log(ROCEMU_LOG_WARN, "%s: capture stopped: %s", dev->name, strerror(-err));
		rocemu_pcap_close(dev->pcap);
		dev->pcap = NULL;
	}
}

int rocemu_egress_send(struct rocemu_device *dev, int fd, const struct rocemu_ipv4_udp *flow,
		       const void *buf, size_t len, uint16_t gso)
{
	const struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = flow->dport,
					.sin_addr.s_addr = flow->daddr };
	const struct sockaddr_in *dst = &to;
	struct rocemu_loop *loop = dev->emu->loop;
	size_t seg = gso ? gso : len, off;
	uint64_t now = 0;
	int err = 0, ret;

	/* A port that is down has no link: the packets are lost, as on the wire. */
	if (dev->port_state != IBV_PORT_ACTIVE) {
		dev->counters.port_xmit_discards += (len + seg - 1) / seg;
		return 0;
	}
	dev->counters.port_xmit_packets += (len + seg - 1) / seg;
	dev->counters.port_xmit_data += len / PORT_DATA_WORD;
	if (!dev->pcap && !dev->fault) {
		struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

		return rocemu_loop_send(loop, fd, dst, &iov, 1, gso);
	}
	if (dev->fault)
		now = rocemu_now_ns();
	for (off = 0; off < len; off += seg) {
		const uint8_t *pkt = (const uint8_t *)buf + off;
		size_t n = len - off < seg ? len - off : seg;

		if (dev->pcap)
			capture(dev, flow, pkt, n);
		if (!dev->fault)
			continue;
		ret = rocemu_fault_apply(dev->fault, fd, dst, pkt, n, now);
		if (ret < 0)
			err = ret;
	}
	if (!dev->fault) {
		struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

		err = rocemu_loop_send(loop, fd, dst, &iov, 1, gso);
	}
	return err;
}

void rocemu_egress_rx(struct rocemu_device *dev, const struct rocemu_dgram *d)
{
	const struct rocemu_ipv4_udp flow = { .saddr = d->src.sin_addr.s_addr, .daddr = dev->ipv4,
					      .sport = d->src.sin_port,
					      .dport = htons(ROCEMU_ROCEV2_PORT) };

	dev->counters.port_rcv_packets++;
	dev->counters.port_rcv_data += d->len / PORT_DATA_WORD;
	if (dev->pcap)
		capture(dev, &flow, d->data, d->len);
}

int rocemu_egress_set_faults(struct rocemu_device *dev, const char *spec, char *err,
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
		const struct rocemu_fault_counters *k = rocemu_fault_counters(dev->fault);

		dev->fault_past.dropped += k->dropped;
		dev->fault_past.duplicated += k->duplicated;
		dev->fault_past.reordered += k->reordered;
		dev->fault_past.corrupted += k->corrupted;
		dev->fault_past.delayed += k->delayed;
		rocemu_fault_free(dev->fault);
	}
	dev->fault = f;
	if (rocemu_fault_config_format(&cfg, text, sizeof(text)) < 0)
		text[0] = '\0';
	rocemu_log(ROCEMU_LOG_INFO, "%s faults: %s", dev->name, text[0] ? text : "off");
	return 0;
}

static int pcap_start(struct rocemu_device *dev, const char *dir, char *err, size_t errlen)
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

int rocemu_egress_start(struct rocemu_emu *emu, char *err, size_t errlen)
{
	const char *faults = getenv("ROCEMU_FAULTS"), *dir = getenv("ROCEMU_PCAP");
	unsigned int i;
	int ret;

	if (dir && *dir && mkdir(dir, 0777) && errno != EEXIST) {
		snprintf(err, errlen, "ROCEMU_PCAP: cannot create %s: %s", dir, strerror(errno));
		return -errno;
	}
	for (i = 0; i < emu->num_devices; i++) {
		struct rocemu_device *dev = &emu->devices[i];
		char why[256] = "";

		if (faults && *faults) {
			ret = rocemu_egress_set_faults(dev, faults, why, sizeof(why));
			if (ret) {
				snprintf(err, errlen, "ROCEMU_FAULTS: %s", why);
				return ret;
			}
		}
		if (dir && *dir) {
			ret = pcap_start(dev, dir, err, errlen);
			if (ret)
				return ret;
		}
	}
	return 0;
}

void rocemu_egress_idle(struct rocemu_emu *emu)
{
	unsigned int i;

	for (i = 0; i < emu->num_devices; i++)
		if (emu->devices[i].pcap)
			rocemu_pcap_flush(emu->devices[i].pcap);
}

void rocemu_egress_stop(struct rocemu_device *dev)
{
	rocemu_fault_free(dev->fault);
	dev->fault = NULL;
	rocemu_pcap_close(dev->pcap);
	dev->pcap = NULL;
}

struct text {
	char *buf;
	size_t size, used;
	bool full;
};

static void text_add(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void text_add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->full)
		return;
	va_start(ap, fmt);
	n = vsnprintf(t->buf + t->used, t->size - t->used, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= t->size - t->used)
		t->full = true;
	else
		t->used += (size_t)n;
}

/* What dev's injectors, the live one and those it replaced, carried out. */
static struct rocemu_fault_counters fault_totals(const struct rocemu_device *dev)
{
	struct rocemu_fault_counters f = dev->fault_past;
	const struct rocemu_fault_counters *now;

	if (!dev->fault)
		return f;
	now = rocemu_fault_counters(dev->fault);
	f.dropped += now->dropped;
	f.duplicated += now->duplicated;
	f.reordered += now->reordered;
	f.corrupted += now->corrupted;
	f.delayed += now->delayed;
	return f;
}

static void device_stats(struct text *t, const struct rocemu_device *dev)
{
	const struct rocemu_device_counters *k = &dev->counters;
	const struct rocemu_fault_counters f = fault_totals(dev);
	char spec[ROCEMU_FAULT_TEXT_MAX] = "";
	const struct {
		const char *name;
		uint64_t value;
	} rows[] = {
		{ "port_xmit_packets", k->port_xmit_packets },
		{ "port_xmit_data", k->port_xmit_data },
		{ "port_rcv_packets", k->port_rcv_packets },
		{ "port_rcv_data", k->port_rcv_data },
		{ "port_xmit_discards", k->port_xmit_discards },
		{ "rx_icrc_errors", dev->rx_icrc_errors },
		{ "rx_dropped", dev->rx_dropped },
		{ "out_of_sequence", k->out_of_sequence },
		{ "duplicate_request", k->duplicate_request },
		{ "packet_seq_err", k->packet_seq_err },
		{ "local_ack_timeout_err", k->local_ack_timeout_err },
		{ "rnr_nak_retry_err", k->rnr_nak_retry_err },
		{ "retransmitted_packets", k->retransmitted_packets },
		{ "fault_dropped", f.dropped },
		{ "fault_duplicated", f.duplicated },
		{ "fault_reordered", f.reordered },
		{ "fault_corrupted", f.corrupted },
		{ "fault_delayed", f.delayed },
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		text_add(t, "%s %s %llu\n", dev->name, rows[i].name,
			 (unsigned long long)rows[i].value);
	if (dev->fault)
		rocemu_fault_config_format(rocemu_fault_config(dev->fault), spec, sizeof(spec));
	text_add(t, "%s faults %s\n", dev->name, spec[0] ? spec : "off");
}

int rocemu_egress_stats_text(struct rocemu_emu *emu, char *buf, size_t size)
{
	struct text t = { .buf = buf, .size = size };
	unsigned int i;

	if (!size)
		return -ENOSPC;
	buf[0] = '\0';
	for (i = 0; i < emu->num_devices; i++)
		device_stats(&t, &emu->devices[i]);
	return t.full ? -ENOSPC : (int)t.used + 1;
}
