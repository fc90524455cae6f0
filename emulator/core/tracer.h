/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The tracers of `rocemu trace`, a live view of a running daemon: one line
 * per event with a timestamp. Each tracer is a socket whose other end the
 * CLI reads, with its filters (device, QP, kinds of event); a tracer that
 * falls behind loses lines (counted, and said on its next line), never
 * slows the daemon. With no tracer, each hook costs one test of
 * emu->ntracers. QPs and async events are traced here where they are
 * made; observe/trace.h decodes packets and CQEs into lines here.
 */
#ifndef ROCEMU_EMULATOR_TRACER_H
#define ROCEMU_EMULATOR_TRACER_H

#include <stdbool.h>
#include <stdint.h>

#include "emulator/core/emu.h"
#include "rocemu/ctrl.h"

struct rocemu_client;
struct rocemu_device;

/* One event for the tracers that want it: its device, kind and up to two QPs it concerns. */
struct rocemu_trace_event {
	const struct rocemu_device *dev;
	uint32_t kind;			/* ROCEMU_TRACE_* */
	uint32_t qpn[2];
};

/* Start a tracer for c with req's filters; *fd gets the end the CLI reads. 0 or -errno. */
int rocemu_trace_start(struct rocemu_client *c, const struct rocemu_trace_req *req, int *fd);

/* c's connection closes: its tracers end. */
void rocemu_trace_client_gone(struct rocemu_client *c);

static inline bool rocemu_tracing(const struct rocemu_emu *emu)
{
	return emu->ntracers != 0;
}

/* Timestamp, device, then fmt: one line to every tracer that wants ev. */
__attribute__((format(printf, 2, 3)))
void rocemu_trace_emit(const struct rocemu_trace_event *ev, const char *fmt, ...);
/* Whether a tracer of emu follows one QP only (a packet's sender is then worth finding). */
bool rocemu_trace_any_qp_filter(const struct rocemu_emu *emu);

/* QP qpn of dev went from state from to state to (their names), for why (NULL: not said). */
void rocemu_trace_qp_state(const struct rocemu_device *dev, uint32_t qpn, const char *from,
			   const char *to, const char *why);
/* An async event of c's device; qpn ROCEMU_TRACE_ANY_QP when it is no QP's. */
void rocemu_trace_async(const struct rocemu_client *c, uint32_t qpn, const char *event);

#endif /* ROCEMU_EMULATOR_TRACER_H */
