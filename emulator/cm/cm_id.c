/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * An rdma_cm id's life: made in a file (its handle, local communication
 * ID and receive PSN drawn), its events queued to the file for
 * GET_EVENT, described for `rocemu status`, freed. What the handshake
 * does with it is cm_proto.c's; the commands that drive both, ucma.c's.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>
#include <rdma/rdma_cma.h>

#include "emulator/cm/cm.h"
#include "emulator/core/client.h"
#include "emulator/core/emu.h"
#include "net/roce/roce_hdr.h"
#include "rocemu/log.h"

/* A random 24-bit PSN, as the kernel's __rdma_create_id draws an id's seq_num. */
static uint32_t random_psn(void)
{
	uint32_t v;

	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != sizeof(v))
		v = (uint32_t)rocemu_now_ns();
	return v & ROCEMU_PSN_MASK;
}

/* The next local communication ID: a cyclic counter XORed with a random operand drawn once. */
static uint32_t comm_id_next(void)
{
	static uint32_t next, operand;

	if (!operand && getrandom(&operand, sizeof(operand), GRND_NONBLOCK) != sizeof(operand))
		operand = (uint32_t)rocemu_now_ns();
	return ++next ^ operand;
}

static const char *const cm_state_names[] = {
	[CM_IDLE] = "IDLE", [CM_REQ_SENT] = "REQ_SENT", [CM_REQ_RCVD] = "REQ_RCVD",
	[CM_REP_SENT] = "REP_SENT", [CM_REP_RCVD] = "REP_RCVD",
	[CM_ESTABLISHED] = "ESTABLISHED", [CM_DREQ_SENT] = "DREQ_SENT",
	[CM_DREQ_RCVD] = "DREQ_RCVD", [CM_TIMEWAIT] = "TIMEWAIT",
};

const char *cm_state_name(enum cm_state s)
{
	return cm_state_names[s];
}

/* Event names for logs (the daemon does not link librdmacm's rdma_event_str). */
static const char *event_name(uint32_t type)
{
	static const char *const names[] = {
		[RDMA_CM_EVENT_ADDR_RESOLVED] = "ADDR_RESOLVED",
		[RDMA_CM_EVENT_ADDR_ERROR] = "ADDR_ERROR",
		[RDMA_CM_EVENT_ROUTE_RESOLVED] = "ROUTE_RESOLVED",
		[RDMA_CM_EVENT_ROUTE_ERROR] = "ROUTE_ERROR",
		[RDMA_CM_EVENT_CONNECT_REQUEST] = "CONNECT_REQUEST",
		[RDMA_CM_EVENT_CONNECT_RESPONSE] = "CONNECT_RESPONSE",
		[RDMA_CM_EVENT_CONNECT_ERROR] = "CONNECT_ERROR",
		[RDMA_CM_EVENT_UNREACHABLE] = "UNREACHABLE",
		[RDMA_CM_EVENT_REJECTED] = "REJECTED",
		[RDMA_CM_EVENT_ESTABLISHED] = "ESTABLISHED",
		[RDMA_CM_EVENT_DISCONNECTED] = "DISCONNECTED",
		[RDMA_CM_EVENT_DEVICE_REMOVAL] = "DEVICE_REMOVAL",
		[RDMA_CM_EVENT_MULTICAST_JOIN] = "MULTICAST_JOIN",
		[RDMA_CM_EVENT_MULTICAST_ERROR] = "MULTICAST_ERROR",
		[RDMA_CM_EVENT_ADDR_CHANGE] = "ADDR_CHANGE",
		[RDMA_CM_EVENT_TIMEWAIT_EXIT] = "TIMEWAIT_EXIT",
	};

	return type < sizeof(names) / sizeof(names[0]) && names[type] ? names[type] : "?";
}

struct rocemu_cm_event *cm_event_add(struct rocemu_cm_id *owner, struct rocemu_cm_id *id,
				     uint32_t type, int32_t status)
{
	struct rocemu_cm_event *ev = calloc(1, sizeof(*ev));
	const char byte = 1;

	if (!ev) {
		rocemu_log(ROCEMU_LOG_ERROR, "rdma_cm id %u: event %s lost: out of memory",
			   id->handle, event_name(type));
		return NULL;
	}
	ev->owner = owner;
	ev->id = id;
	ev->resp.uid = owner->uid;
	ev->resp.id = id->handle;
	ev->resp.event = type;
	ev->resp.status = (uint32_t)status;
	rocemu_list_add_tail(&owner->file->events, &ev->node);
	if (write(owner->file->event_fd, &byte, 1) != 1)
		rocemu_log(ROCEMU_LOG_WARN, "rdma_cm id %u: event pipe full", id->handle);
	rocemu_log(ROCEMU_LOG_DEBUG, "rdma_cm id %u event %s status %d", id->handle,
		   event_name(type), status);
	return ev;
}

struct ucma_abi_event_resp *cm_event_queue(struct rocemu_cm_id *owner, struct rocemu_cm_id *id,
					   uint32_t type, int32_t status)
{
	static struct ucma_abi_event_resp lost;
	struct rocemu_cm_event *ev = cm_event_add(owner, id, type, status);

	return ev ? &ev->resp : &lost;
}

struct rocemu_cm_id *cm_id_new(struct rocemu_cm_file *file, uint64_t uid, uint16_t ps,
			       uint8_t qp_type)
{
	struct rocemu_emu *emu = file->client->emu;
	struct rocemu_cm_id *id = calloc(1, sizeof(*id));
	int err;

	if (!id)
		return NULL;
	err = rocemu_charge(file->client, &id->charge, ROCEMU_RES_CM_ID, ROCEMU_OBJ_ONLY);
	if (!err)
		err = rocemu_obj_add(emu, &rocemu_cm_id_kind, file, id);
	if (err) {
		rocemu_uncharge(&id->charge);
		free(id);
		errno = -err;
		return NULL;
	}
	id->emu = emu;
	id->local_comm_id = comm_id_next();
	id->rq_psn = random_psn();
	id->uid = uid;
	id->ps = ps;
	id->qp_type = qp_type;
	id->src.sin_family = AF_INET;
	id->dst.sin_family = AF_INET;
	rocemu_list_init(&id->mcasts);
	rocemu_list_add_tail(&emu->cm_ids_all, &id->emu_node);
	return id;
}

/* Drop id's queued events; a request it listened for goes too, as unreported. */
static void events_drop(struct rocemu_cm_id *id)
{
	struct rocemu_list *n, *next;

	for (n = id->file->events.next; n != &id->file->events; n = next) {
		struct rocemu_cm_event *ev = rocemu_container_of(n, struct rocemu_cm_event, node);

		next = n->next;
		if (ev->owner != id && ev->id != id)
			continue;
		rocemu_list_del(&ev->node);
		free(ev);
	}
}

void cm_id_free(struct rocemu_cm_id *id)
{
	if (id->timer)
		rocemu_loop_timer_cancel(id->emu->loop, id->timer);
	events_drop(id);
	while (!rocemu_list_empty(&id->mcasts)) {
		struct rocemu_cm_mcast *mc = rocemu_container_of(id->mcasts.next,
								 struct rocemu_cm_mcast, node);

		rocemu_list_del(&mc->node);
		free(mc);
	}
	rocemu_obj_remove(id->emu, &rocemu_cm_id_kind, id);
	rocemu_list_del(&id->emu_node);
	rocemu_uncharge(&id->charge);
	free(id);
}

/* Freed as an object of its file: whoever frees it ended its handshake first (cm_id_destroy). */
static void cm_id_kind_free(struct rocemu_emu *emu, struct rocemu_cm_id *id)
{
	(void)emu;
	cm_id_free(id);
}

ROCEMU_OBJ_KIND(rocemu_cm_id_kind, struct rocemu_cm_id, struct rocemu_cm_file, cm_ids, ids, file,
		handle, file_node, cm_id_kind_free, .first = 1, .max = ROCEMU_MAX_CM_IDS);

void cm_id_describe(const struct rocemu_cm_id *id, char *buf, size_t len)
{
	static const char *const states[] = {
		[CMA_IDLE] = "IDLE", [CMA_ADDR_BOUND] = "ADDR_BOUND",
		[CMA_ADDR_RESOLVED] = "ADDR_RESOLVED", [CMA_ROUTE_RESOLVED] = "ROUTE_RESOLVED",
		[CMA_LISTEN] = "LISTEN", [CMA_CONNECT] = "CONNECT", [CMA_DISCONNECT] = "DISCONNECT",
	};
	char src[INET_ADDRSTRLEN], dst[INET_ADDRSTRLEN];

	snprintf(buf, len, "id %u ps 0x%04x %s %s %s:%u -> %s:%u cm %s qp 0x%06x", id->handle,
		 id->ps, states[id->state], id->dev ? id->dev->name : "-",
		 inet_ntop(AF_INET, &id->src.sin_addr, src, sizeof(src)), ntohs(id->src.sin_port),
		 inet_ntop(AF_INET, &id->dst.sin_addr, dst, sizeof(dst)), ntohs(id->dst.sin_port),
		 cm_state_name(id->cm), id->local_qpn);
}
