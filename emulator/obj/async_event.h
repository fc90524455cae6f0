/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Async events (ibv_get_async_event): one record per event, as uverbs
 * writes it, into the event pipe of the context that owns the object.
 * Every part of the emulator reports its events here; this module knows
 * the pipe and nothing of the connection around it.
 */
#ifndef ROCEMU_EMULATOR_ASYNC_EVENT_H
#define ROCEMU_EMULATOR_ASYNC_EVENT_H

#include <stdint.h>
#include <infiniband/verbs.h>

struct rocemu_client;
struct rocemu_qp;

/*
 * Report type about element (the application's own ibv_qp or ibv_cq
 * pointer, or the port number) to context c. The pipe is non-blocking: a
 * client that never reads loses the event, with a warning in the log.
 */
void rocemu_async_event(struct rocemu_client *c, uint64_t element, enum ibv_event_type type);

/* Report type about qp to its owner, with one log line naming the QP. */
void rocemu_async_event_qp(struct rocemu_qp *qp, enum ibv_event_type type);

#endif /* ROCEMU_EMULATOR_ASYNC_EVENT_H */
