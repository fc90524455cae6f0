/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * RAW_PACKET per QP and its transport ops: what create checks and keeps
 * (CAP_NET_RAW, the TSO header, RSS), queue positions on state changes and
 * the flush on ERR (engine/dgram_qp.c completes and fails its WQEs).
 */
#include <errno.h>
#include <linux/capability.h>
#include <stdlib.h>
#include <string.h>

#include "emulator/engine/dgram_qp.h"
#include "emulator/ring/format.h"
#include "emulator/obj/qp.h"
#include "emulator/obj/srq.h"
#include "emulator/raw/raw.h"
#include "emulator/wq/rwq_ind_table.h"
#include "rocemu/ctrl.h"

/*
 * uverbs: a RAW_PACKET QP needs CAP_NET_RAW (EPERM); mlx5: a TSO header
 * within the device's, an RSS QP's table one of the client's and its
 * Toeplitz key of ROCEMU_RSS_KEY_MAX bytes (EINVAL).
 */
static int raw_create_check(const struct rocemu_client *c, const struct rocemu_create_qp_req *req)
{
	if (!rocemu_client_capable(c, CAP_NET_RAW))
		return -EPERM;
	if (req->max_tso_header > ROCEMU_RAW_MAX_TSO_HEADER)
		return -EINVAL;
	if (req->rwq_ind_tbl == ROCEMU_NO_HANDLE)
		return 0;
	if (!rocemu_rwq_ind_table_lookup(c, req->rwq_ind_tbl) ||
	    req->rx_hash_key_len != ROCEMU_RSS_KEY_MAX ||
	    req->rx_hash_function != IBV_RX_HASH_FUNC_TOEPLITZ || req->max_tso_header ||
	    req->create_flags)
		return -EINVAL;
	return 0;
}

static int raw_init(struct rocemu_qp *qp)
{
	qp->raw = calloc(1, sizeof(*qp->raw));
	return qp->raw ? 0 : -ENOMEM;
}

/* What the request says of the frames: TSO, and for an RSS QP its hash. */
static void raw_created(struct rocemu_qp *qp, const struct rocemu_create_qp_req *req)
{
	struct rocemu_raw *raw = qp->raw;

	raw->max_tso_header = req->max_tso_header;
	if (req->rwq_ind_tbl == ROCEMU_NO_HANDLE)
		return;
	/* Held while the QP lives: the table's destroy is EBUSY until then. */
	raw->rss_table = rocemu_rwq_ind_table_lookup(qp->owner, req->rwq_ind_tbl);
	raw->rss_table->users++;
	memcpy(raw->rss_key, req->rx_hash_key, ROCEMU_RSS_KEY_MAX);
	raw->rss = (struct rocemu_rss_conf){
		.key = raw->rss_key, .key_len = ROCEMU_RSS_KEY_MAX, .fields = req->rx_hash_fields_mask,
	};
}

static void raw_destroy(struct rocemu_qp *qp)
{
	if (qp->raw->rss_table)
		qp->raw->rss_table->users--;
	free(qp->raw);
	qp->raw = NULL;
}

/* Complete every WQE posted and not yet taken, on both queues, with WR_FLUSH_ERR. */
static void raw_flush(struct rocemu_qp *qp)
{
	rocemu_dgram_flush(qp, &qp->raw->sq_bb, &qp->raw->rq_ci);
}

static void raw_modified(struct rocemu_qp *qp, enum ibv_qp_state cur, enum ibv_qp_state next)
{
	struct rocemu_raw *raw = qp->raw;

	switch (next) {
	case IBV_QPS_RESET:
		raw->sq_bb = 0;
		raw->rq_ci = 0;
		qp->owner->dev->format->doorbell_reset(qp);
		break;
	case IBV_QPS_RTS:
		rocemu_raw_send_run(qp);
		break;
	case IBV_QPS_ERR:
		raw_flush(qp);
		if (cur != IBV_QPS_ERR)
			rocemu_srq_qp_errored(qp);
		break;
	default:
		break;
	}
}

static void raw_timer(struct rocemu_qp *qp, enum rocemu_qp_timer_kind kind)
{
	(void)qp;
	(void)kind;	/* RAW_PACKET arms none: nothing is acknowledged */
}

/* Every WQE is sent when fetched: nothing is left to drain. */
static bool raw_sq_draining(const struct rocemu_qp *qp)
{
	(void)qp;
	return false;
}

const struct rocemu_transport_ops rocemu_raw_transport = {
	.name = "RAW_PACKET",
	.connected = false,
	.create_check = raw_create_check,
	.init = raw_init,
	.created = raw_created,
	.destroy = raw_destroy,
	.modified = raw_modified,
	.post = rocemu_raw_send_run,
	.flush = raw_flush,
	.rx_frame = rocemu_raw_rx_frame,
	.timer = raw_timer,
	.sq_draining = raw_sq_draining,
};
