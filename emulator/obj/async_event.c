/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/obj/async_event.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "emulator/core/client.h"
#include "emulator/core/tracer.h"
#include "emulator/obj/qp.h"
#include "rocemu/log.h"

static const char *const event_names[] = {
	[IBV_EVENT_CQ_ERR] = "CQ_ERR",
	[IBV_EVENT_QP_FATAL] = "QP_FATAL",
	[IBV_EVENT_QP_REQ_ERR] = "QP_REQ_ERR",
	[IBV_EVENT_QP_ACCESS_ERR] = "QP_ACCESS_ERR",
	[IBV_EVENT_COMM_EST] = "COMM_EST",
	[IBV_EVENT_SQ_DRAINED] = "SQ_DRAINED",
	[IBV_EVENT_PORT_ACTIVE] = "PORT_ACTIVE",
	[IBV_EVENT_PORT_ERR] = "PORT_ERR",
	[IBV_EVENT_SRQ_ERR] = "SRQ_ERR",
	[IBV_EVENT_SRQ_LIMIT_REACHED] = "SRQ_LIMIT_REACHED",
	[IBV_EVENT_QP_LAST_WQE_REACHED] = "QP_LAST_WQE_REACHED",
	[IBV_EVENT_DEVICE_FATAL] = "DEVICE_FATAL",
};

static const char *event_name(enum ibv_event_type type)
{
	return (unsigned)type < sizeof(event_names) / sizeof(event_names[0]) &&
	       event_names[type] ? event_names[type] : "?";
}

/* Write the event to c's pipe, where the shim's ibv_get_async_event reads it. */
static void deliver(struct rocemu_client *c, uint64_t element, enum ibv_event_type type)
{
	struct rocemu_async_record rec = { .element = element, .event_type = type };

	if (c->async_fd < 0)
		return;
	if (write(c->async_fd, &rec, sizeof(rec)) != sizeof(rec))
		rocemu_log(ROCEMU_LOG_WARN, "%s pid %d: async event %d dropped (%s)",
			   c->dev ? c->dev->name : "-", (int)c->pid, (int)type, strerror(errno));
}

void rocemu_async_event(struct rocemu_client *c, uint64_t element, enum ibv_event_type type)
{
	if (rocemu_tracing(c->emu))
		rocemu_trace_async(c, ROCEMU_TRACE_ANY_QP, event_name(type));
	deliver(c, element, type);
}

void rocemu_async_event_qp(struct rocemu_qp *qp, enum ibv_event_type type)
{
	rocemu_log(ROCEMU_LOG_INFO, "%s qp 0x%06x event %s", qp->owner->dev->name, qp->qpn,
		   event_name(type));
	if (rocemu_tracing(qp->owner->emu))
		rocemu_trace_async(qp->owner, qp->qpn, event_name(type));
	deliver(qp->owner, qp->user_qp, type);
}
