/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Completion channels and async events. Both fds are pipes the daemon
 * feeds with the records the kernel's uverbs writes (8 bytes per
 * completion event, 16 per async event), so poll/select/epoll and
 * O_NONBLOCK behave as on hardware. The ack functions of libibverbs work
 * on our objects as they are.
 */
#include "lib/shim.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rocemu/log.h"

struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context)
{
	struct rocemu_create_comp_channel_resp resp;
	struct rocemu_channel *ch;
	int fd, err;

	if (!rocemu_ctx_is_ours(context))
		return REAL(ibv_create_comp_channel)(context);
	ch = calloc(1, sizeof(*ch));
	if (!ch) {
		errno = ENOMEM;
		return NULL;
	}
	err = rocemu_conn_call(&to_rctx(context)->conn, ROCEMU_OP_CREATE_COMP_CHANNEL, NULL,
			       &resp, &fd, 1);
	if (err) {
		free(ch);
		errno = -err;
		return NULL;
	}
	ch->handle = resp.handle;
	ch->ibch.context = context;
	ch->ibch.fd = fd;
	ch->ibch.refcnt = 0;
	return &ch->ibch;
}

int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	struct ibv_context *context = channel->context;
	struct rocemu_handle_req req;
	int err;

	if (!rocemu_ctx_is_ours(context))
		return REAL(ibv_destroy_comp_channel)(channel);
	pthread_mutex_lock(&context->mutex);
	if (channel->refcnt) {
		pthread_mutex_unlock(&context->mutex);
		return EBUSY;
	}
	req = (struct rocemu_handle_req){ .handle = to_rchannel(channel)->handle };
	err = rocemu_conn_call(&to_rctx(context)->conn, ROCEMU_OP_DESTROY_COMP_CHANNEL, &req,
			       NULL, NULL, 0);
	pthread_mutex_unlock(&context->mutex);
	if (err)
		return rocemu_errno_value(err);
	close(channel->fd);
	free(to_rchannel(channel));
	return 0;
}

/*
 * Read exactly len bytes of one record; 0, or -1 with errno (EAGAIN when
 * empty). A signal ends the wait with EINTR, as libibverbs' read of the
 * uverbs file does: qperf and others stop their event loops that way.
 */
static int read_record(int fd, void *buf, size_t len)
{
	ssize_t n = read(fd, buf, len);

	if (n == (ssize_t)len)
		return 0;
	if (n >= 0)
		errno = n == 0 ? EIO : EPROTO;
	return -1;
}

int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq,
		     void **cq_context)
{
	uint64_t user_cq;

	if (!rocemu_ctx_is_ours(channel->context))
		return REAL(ibv_get_cq_event)(channel, cq, cq_context);
	if (read_record(channel->fd, &user_cq, sizeof(user_cq)))
		return -1;
	*cq = (struct ibv_cq *)(uintptr_t)user_cq;
	*cq_context = (*cq)->cq_context;
	/* The next arm must carry a new sequence number (mlx5 cq_event). */
	__atomic_fetch_add(&to_rcq(*cq)->arm_sn, 1, __ATOMIC_RELAXED);
	return 0;
}

enum async_element { ELEM_NONE, ELEM_CQ, ELEM_QP, ELEM_SRQ, ELEM_WQ, ELEM_PORT };

/* What record.element means, per event type (as libibverbs decodes it). */
static const enum async_element async_elements[] = {
	[IBV_EVENT_CQ_ERR] = ELEM_CQ,
	[IBV_EVENT_QP_FATAL] = ELEM_QP,
	[IBV_EVENT_QP_REQ_ERR] = ELEM_QP,
	[IBV_EVENT_QP_ACCESS_ERR] = ELEM_QP,
	[IBV_EVENT_COMM_EST] = ELEM_QP,
	[IBV_EVENT_SQ_DRAINED] = ELEM_QP,
	[IBV_EVENT_PATH_MIG] = ELEM_QP,
	[IBV_EVENT_PATH_MIG_ERR] = ELEM_QP,
	[IBV_EVENT_QP_LAST_WQE_REACHED] = ELEM_QP,
	[IBV_EVENT_SRQ_ERR] = ELEM_SRQ,
	[IBV_EVENT_SRQ_LIMIT_REACHED] = ELEM_SRQ,
	[IBV_EVENT_WQ_FATAL] = ELEM_WQ,
	[IBV_EVENT_PORT_ACTIVE] = ELEM_PORT,
	[IBV_EVENT_PORT_ERR] = ELEM_PORT,
	[IBV_EVENT_LID_CHANGE] = ELEM_PORT,
	[IBV_EVENT_PKEY_CHANGE] = ELEM_PORT,
	[IBV_EVENT_SM_CHANGE] = ELEM_PORT,
	[IBV_EVENT_CLIENT_REREGISTER] = ELEM_PORT,
	[IBV_EVENT_GID_CHANGE] = ELEM_PORT,
	[IBV_EVENT_DEVICE_FATAL] = ELEM_NONE,
};

static void async_event_fill(struct ibv_async_event *event,
			     const struct rocemu_async_record *rec)
{
	void *ptr = (void *)(uintptr_t)rec->element;

	event->event_type = (enum ibv_event_type)rec->event_type;
	memset(&event->element, 0, sizeof(event->element));
	if (rec->event_type >= sizeof(async_elements) / sizeof(async_elements[0]))
		return;
	switch (async_elements[rec->event_type]) {
	case ELEM_CQ:
		event->element.cq = ptr;
		break;
	case ELEM_QP:
		event->element.qp = ptr;
		break;
	case ELEM_SRQ:
		event->element.srq = ptr;
		break;
	case ELEM_WQ:
		event->element.wq = ptr;
		break;
	case ELEM_PORT:
		event->element.port_num = (int)rec->element;
		break;
	case ELEM_NONE:
		break;
	}
}

int ibv_get_async_event(struct ibv_context *context, struct ibv_async_event *event)
{
	struct rocemu_context *rctx;
	struct rocemu_async_record rec;

	if (!rocemu_ctx_is_ours(context))
		return REAL(ibv_get_async_event)(context, event);
	rctx = to_rctx(context);
	if (read_record(context->async_fd, &rec, sizeof(rec))) {
		/* The daemon closed the pipe: it is gone, as a dead HCA is. */
		if (errno != EIO)
			return -1;
		rocemu_conn_set_lost(&rctx->conn);
		if (__atomic_exchange_n(&rctx->fatal_reported, true, __ATOMIC_RELAXED))
			return -1;
		rec = (struct rocemu_async_record){ .event_type = IBV_EVENT_DEVICE_FATAL };
	}
	async_event_fill(event, &rec);
	return 0;
}
