/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * DC's transport ops: RC's life of a QP and RC's engines, DC's opcode
 * class, and what differs between a DCI (a requester whose peer is each
 * WQE's DCT, dci.c) and a DCT (a responder to any DCI with its key,
 * dct.c).
 */
#include "emulator/dc/dc.h"

#include <errno.h>
#include <stdlib.h>

#include "emulator/core/device.h"
#include "emulator/engine/transport.h"
#include "emulator/obj/qp.h"
#include "net/roce/roce_opcode.h"
#include "rocemu/ctrl.h"
#include "rocemu/ring.h"

/* The DC attributes of a create request are acceptable (-EINVAL otherwise). */
static int dc_create_check(const struct rocemu_client *c, const struct rocemu_create_qp_req *req)
{
	(void)c;	/* any client may make one */
	if (req->qp_type != ROCEMU_QPT_DCI)
		return 0;
	/* mlx5: streams within the caps (mlx5dv_query_device's dci_streams_caps) */
	return req->dci_log_concurrent > ROCEMU_DCI_MAX_LOG_STREAMS ||
		       req->dci_log_errored > ROCEMU_DCI_MAX_LOG_STREAMS ? -EINVAL : 0;
}

/* A new DC QP takes them. */
static void dc_created(struct rocemu_qp *qp, const struct rocemu_create_qp_req *req)
{
	if (qp->type == ROCEMU_QPT_DCT) {
		qp->dc->access_key = req->dct_access_key;
		/* A DCT is told no responder depth: it has the device's. */
		qp->attr.max_dest_rd_atomic = ROCEMU_MAX_RD_ATOM;
	} else {
		qp->dc->log_concurrent = req->dci_log_concurrent;
		qp->dc->log_errored = req->dci_log_errored;
	}
}

/* A DCI's WQEs go to one DCT at a time, and its streams fail alone. */
static const struct rocemu_rc_variant dci_variant = {
	.fetch = rocemu_dci_route,
	.req_fail = rocemu_dci_stream_fail,
};

/* A DCT's error ends one DCI's connection, not the DCT. */
static const struct rocemu_rc_variant dct_variant = {
	.resp_fail = rocemu_dct_conn_fail,
};

static int dc_init(struct rocemu_qp *qp)
{
	struct rocemu_dc *dc = calloc(1, sizeof(*dc));

	if (!dc)
		return -ENOMEM;
	if (qp->type == ROCEMU_QPT_DCT) {
		dc->conns = calloc(ROCEMU_DCT_CONNS, sizeof(*dc->conns));
		if (!dc->conns) {
			free(dc);
			return -ENOMEM;
		}
	}
	qp->dc = dc;
	rocemu_rc_start(qp, &dc->rc);
	dc->rc.opclass = ROCEMU_OP_TRANSPORT_DC;
	dc->rc.variant = qp->type == ROCEMU_QPT_DCT ? &dct_variant : &dci_variant;
	return 0;
}

static void dc_destroy(struct rocemu_qp *qp)
{
	rocemu_dct_forget(qp);
	free(qp->dc->conns);
	rocemu_rc_stop(qp);
	free(qp->dc);
	qp->dc = NULL;
	qp->rc = NULL;
}

static void dc_modified(struct rocemu_qp *qp, enum ibv_qp_state cur, enum ibv_qp_state next)
{
	if (next == IBV_QPS_RESET || next == IBV_QPS_ERR) {
		rocemu_dct_forget(qp);
		qp->dc->connected = false;
	}
	/* RESET forgets the streams in error with the rest of the DCI's context. */
	if (next == IBV_QPS_RESET)
		qp->dc->nerrored = 0;
	rocemu_rc_modified(qp, cur, next);
	/* A DCT's peers are its DCIs, each with a path of its own (dct.c). */
	if (qp->type == ROCEMU_QPT_DCT && next == IBV_QPS_RTR && cur == IBV_QPS_INIT)
		rocemu_qp_path_release(qp);
}

/* Only a DCI has a send queue. */
static void dc_post(struct rocemu_qp *qp)
{
	if (qp->type == ROCEMU_QPT_DCI)
		rocemu_rc_req_run(qp);
}

static void dc_rx(struct rocemu_qp *qp, const struct rocemu_pkt *pkt)
{
	if (qp->type == ROCEMU_QPT_DCT)
		rocemu_dct_rx(qp, pkt);
	else
		rocemu_dci_rx(qp, pkt);
}

static void dc_timer(struct rocemu_qp *qp, enum rocemu_qp_timer_kind kind)
{
	if (kind == ROCEMU_QP_TIMER_TX)
		rocemu_rc_req_run(qp);
	else if (kind == ROCEMU_QP_TIMER_RESP && qp->type == ROCEMU_QPT_DCT)
		rocemu_dct_drain(qp);
	else
		rocemu_rc_timer(qp, kind);
}

const struct rocemu_transport_ops rocemu_dc_transport = {
	.name = "DC",
	.connected = false,	/* a DCT takes any DCI; a DCI checks its DCT itself */
	.create_check = dc_create_check,
	.init = dc_init,
	.created = dc_created,
	.destroy = dc_destroy,
	.modified = dc_modified,
	.post = dc_post,
	.flush = rocemu_rc_flush,
	.rx = dc_rx,
	.timer = dc_timer,
	.sq_draining = rocemu_rc_sq_draining,
};
