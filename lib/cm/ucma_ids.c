/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The shim's record of an rdma_cm file's ids (handle, uid, events
 * reported), kept from the commands and events that pass, so that when
 * rocemud is gone the file still answers as the kernel's does when its
 * device goes: one RDMA_CM_EVENT_DEVICE_REMOVAL per id, then DESTROY_ID
 * with the count of events reported, so rdma_destroy_id neither fails nor
 * waits for events that will never come. An id a connection request made
 * is the kernel's ctx of uid 0 until a connected ACCEPT gives it a uid:
 * the kernel's ucma ignores its events until then, and so does this count.
 */
#include "lib/shim.h"
#include "lib/cm/ucma.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_cma_abi.h>

static struct rocemu_ucma_id *id_find(struct rocemu_ucma_ids *ids, uint32_t handle)
{
	size_t i;

	for (i = 0; i < ids->n; i++)
		if (ids->v[i].handle == handle)
			return &ids->v[i];
	return NULL;
}

static void id_add(struct rocemu_ucma_ids *ids, uint32_t handle, uint64_t uid,
		   uint32_t events_reported, bool uid_own)
{
	struct rocemu_ucma_id *v;

	if (ids->n == ids->cap) {
		size_t cap = ids->cap ? ids->cap * 2 : 16;

		v = realloc(ids->v, cap * sizeof(*v));
		if (!v)
			return;		/* unrecorded: no DEVICE_REMOVAL for it */
		ids->v = v;
		ids->cap = cap;
	}
	ids->v[ids->n++] = (struct rocemu_ucma_id){ .handle = handle, .uid = uid,
						     .events_reported = events_reported,
						     .uid_own = uid_own };
}

static void id_remove(struct rocemu_ucma_ids *ids, uint32_t handle)
{
	struct rocemu_ucma_id *id = id_find(ids, handle);

	if (id)
		*id = ids->v[--ids->n];
}

void rocemu_ucma_ids_note(struct rocemu_ucma_ids *ids, const void *cmd, const void *resp)
{
	struct ucma_abi_cmd_hdr hdr;

	memcpy(&hdr, cmd, sizeof(hdr));
	switch (hdr.cmd) {
	case UCMA_CMD_CREATE_ID: {
		const struct ucma_abi_create_id *c = cmd;
		const struct ucma_abi_create_id_resp *r = resp;

		id_add(ids, r->id, c->uid, 0, true);
		break;
	}
	case UCMA_CMD_DESTROY_ID:
		id_remove(ids, ((const struct ucma_abi_destroy_id *)cmd)->id);
		break;
	case UCMA_CMD_ACCEPT: {
		const struct ucma_abi_accept *c = cmd;
		struct rocemu_ucma_id *id = id_find(ids, c->id);

		if (id && c->conn_param.valid) {
			id->uid = c->uid;
			id->uid_own = true;
		}
		break;
	}
	case UCMA_CMD_GET_EVENT: {
		const struct ucma_abi_event_resp *r = resp;
		size_t i;

		/* Counted on the id whose uid the event carries, as the kernel counts: not its requests'. */
		for (i = 0; i < ids->n; i++)
			if (ids->v[i].uid_own && ids->v[i].uid == r->uid)
				ids->v[i].events_reported++;
		if (r->event == RDMA_CM_EVENT_CONNECT_REQUEST)
			id_add(ids, r->id, r->uid, 0, false);
		break;
	}
	default:
		break;
	}
}

void rocemu_ucma_ids_move(struct rocemu_ucma_ids *from, struct rocemu_ucma_ids *to,
			  uint32_t handle)
{
	struct rocemu_ucma_id *id = id_find(from, handle);

	if (!id || from == to)
		return;
	id_add(to, id->handle, id->uid, id->events_reported, id->uid_own);
	id_remove(from, handle);
}

/* Copy n bytes of r to the command's response address, at most its out. */
static void respond(const struct ucma_abi_cmd_hdr *hdr, uint64_t response, const void *r, size_t n)
{
	memcpy((void *)(uintptr_t)response, r, n < hdr->out ? n : hdr->out);
}

int rocemu_ucma_ids_lost(struct rocemu_ucma_ids *ids, const void *cmd)
{
	struct ucma_abi_cmd_hdr hdr;
	struct rocemu_ucma_id *id;
	size_t i;

	memcpy(&hdr, cmd, sizeof(hdr));
	switch (hdr.cmd) {
	case UCMA_CMD_GET_EVENT: {
		const struct ucma_abi_get_event *c = cmd;
		struct ucma_abi_event_resp r = { .event = RDMA_CM_EVENT_DEVICE_REMOVAL };

		/* The kernel reports no event of an id without a uid: it has no DEVICE_REMOVAL. */
		for (i = 0; i < ids->n && (ids->v[i].removal_reported || !ids->v[i].uid_own); i++)
			;
		if (i == ids->n)
			return -ENODEV;
		ids->v[i].removal_reported = true;
		ids->v[i].events_reported++;
		r.uid = ids->v[i].uid;
		r.id = ids->v[i].handle;
		respond(&hdr, c->response, &r, sizeof(r));
		return 0;
	}
	case UCMA_CMD_DESTROY_ID: {
		const struct ucma_abi_destroy_id *c = cmd;
		struct ucma_abi_destroy_id_resp r;

		id = id_find(ids, c->id);
		if (!id)
			return -ENOENT;
		r.events_reported = id->events_reported;
		id_remove(ids, c->id);
		respond(&hdr, c->response, &r, sizeof(r));
		return 0;
	}
	default:
		return -ENODEV;
	}
}
