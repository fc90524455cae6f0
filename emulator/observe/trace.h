/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * `rocemu trace`: a live view of a running daemon, one line per event with
 * a timestamp: packets sent and received (decoded, ICRC checked on
 * receive), QP state changes, CQEs and async events. Each tracer is a
 * socket whose other end the CLI reads; a tracer that falls behind loses
 * lines (counted, and said on its next line), never slows the daemon. With
 * no tracer, each hook costs one test of emu->ntracers.
 */
#ifndef ROCEMU_EMULATOR_TRACE_H
#define ROCEMU_EMULATOR_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#include "emulator/core/emu.h"
#include "net/roce/icrc.h"
#include "rocemu/ctrl.h"

struct rocemu_client;
struct rocemu_cq;
struct rocemu_cqe_info;
struct rocemu_device;
struct rocemu_qp;

/* Start a tracer for c with req's filters; *fd gets the end the CLI reads. 0 or -errno. */
int rocemu_trace_start(struct rocemu_client *c, const struct rocemu_trace_req *req, int *fd);

/* c's connection closes: its tracers end. */
void rocemu_trace_client_gone(struct rocemu_client *c);

static inline bool rocemu_tracing(const struct rocemu_emu *emu)
{
	return emu->ntracers != 0;
}

/* Packets of buf[0, len) along flow (a run of seg-byte packets when seg > 0). */
void rocemu_trace_packets(struct rocemu_device *dev, bool sent, const struct rocemu_ipv4_udp *flow,
			  const uint8_t *buf, size_t len, size_t seg);
void rocemu_trace_qp_state(const struct rocemu_qp *qp, enum ibv_qp_state from,
			   enum ibv_qp_state to, const char *why);
/* A CQE as the format wrote it: its opcode and, for an error, its syndrome. */
void rocemu_trace_cqe(const struct rocemu_cq *cq, const struct rocemu_cqe_info *info,
		      uint8_t cqe_opcode, uint8_t syndrome);
/* An async event of c's device; qpn ROCEMU_TRACE_ANY_QP when it is no QP's. */
void rocemu_trace_async(const struct rocemu_client *c, uint32_t qpn, const char *event);

#endif /* ROCEMU_EMULATOR_TRACE_H */
