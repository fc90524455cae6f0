/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/observe/stats.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "emulator/core/emu.h"
#include "emulator/observe/fault_inject.h"

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

static void device_stats(struct text *t, const struct rocemu_device *dev)
{
	const struct rocemu_loop *loop = dev->emu ? dev->emu->loop : NULL;
	uint64_t queue_full = !loop ? 0 : rocemu_loop_local_drops_of(loop, dev->udp_fd) +
					   rocemu_loop_local_drops_of(loop, dev->udp_fd_unsummed);
	const struct rocemu_device_counters *k = &dev->counters;
	const struct rocemu_fault_counters f = rocemu_fault_inject_totals(dev);
	const struct rocemu_vxlan_counters *v = &dev->vxlan.counters;
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
		{ "rx_no_qp", dev->rx_no_qp },
		{ "rx_forged_source", dev->rx_forged_source },
		{ "rx_eth_dropped", dev->rx_eth_dropped },
		{ "direct_wakeups", dev->direct_wakeups },
		{ "rx_queue_full", queue_full },
		{ "out_of_sequence", k->out_of_sequence },
		{ "duplicate_request", k->duplicate_request },
		{ "packet_seq_err", k->packet_seq_err },
		{ "local_ack_timeout_err", k->local_ack_timeout_err },
		{ "rnr_nak_retry_err", k->rnr_nak_retry_err },
		{ "retransmitted_packets", k->retransmitted_packets },
		{ "rx_ghost_acks", k->rx_ghost_acks },
		{ "rx_bad_responses", k->rx_bad_responses },
		{ "rx_bad_duplicates", k->rx_bad_duplicates },
		{ "rx_stale_atomics", k->rx_stale_atomics },
		{ "rx_busy_rd_atomics", k->rx_busy_rd_atomics },
		{ "rx_qkey_violations", k->rx_qkey_violations },
		{ "rx_ud_dropped", k->rx_ud_dropped },
		{ "out_of_buffer", k->out_of_buffer },
		{ "rx_uc_dropped", k->rx_uc_dropped },
		{ "rx_cm_dropped", k->rx_cm_dropped },
		{ "rx_dct_connect", k->rx_dct_connect },
		{ "rx_dc_key_violations", k->rx_dc_key_violations },
		{ "raw_tx_frames", k->raw_tx_frames },
		{ "raw_rx_frames", k->raw_rx_frames },
		{ "raw_rx_dropped", k->raw_rx_dropped },
		{ "vxlan_tx_frames", v->tx_frames },
		{ "vxlan_tx_dropped", v->tx_dropped },
		{ "vxlan_rx_frames", v->rx_frames },
		{ "vxlan_rx_malformed", v->rx_malformed },
		{ "vxlan_rx_other_vni", v->rx_other_vni },
		{ "vxlan_rx_looped", v->rx_looped },
		{ "vxlan_fdb_learned", v->fdb_learned },
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

int rocemu_stats_text(struct rocemu_emu *emu, char *buf, size_t size)
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
