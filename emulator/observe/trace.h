/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * `rocemu trace` lines for what the data path does: packets sent and
 * received (decoded, ICRC checked on receive) and CQEs written, handed to
 * the tracers (core/tracer.h, which also starts and ends them).
 */
#ifndef ROCEMU_EMULATOR_TRACE_H
#define ROCEMU_EMULATOR_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "emulator/core/tracer.h"
#include "net/roce/icrc.h"

struct rocemu_cq;
struct rocemu_cqe_info;
struct rocemu_device;

/* Packets of buf[0, len) along flow (a run of seg-byte packets when seg > 0). */
void rocemu_trace_packets(struct rocemu_device *dev, bool sent, const struct rocemu_ipv4_udp *flow,
			  const uint8_t *buf, size_t len, size_t seg);
/* A CQE as the format wrote it, and for an error the syndrome it carries. */
void rocemu_trace_cqe(const struct rocemu_cq *cq, const struct rocemu_cqe_info *info,
		      uint8_t syndrome);

#endif /* ROCEMU_EMULATOR_TRACE_H */
