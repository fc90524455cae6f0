/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * XRC's transport ops (RC's life and engines, XRC's opcode class), a
 * target's references, and the SRQ an XRCETH selects. A target belongs
 * to its domain, as in the kernel (ib_open_qp, __ib_destroy_shared_qp):
 * every context that opens the domain may open the target by number, and
 * the target lives until its last reference goes, whichever context made it.
 */
#include "emulator/engine/transport.h"
#include "emulator/xrc/xrc.h"

#include <errno.h>
#include <stdlib.h>

#include "emulator/obj/qp.h"
#include "emulator/obj/srq.h"
#include "emulator/obj/xrcd.h"
#include "emulator/rc/rc.h"
#include "net/roce/roce_opcode.h"
#include "rocemu/log.h"

/* Only an initiator has a send queue: a target's doorbell means nothing. */
static void xrc_post(struct rocemu_qp *qp)
{
	if (qp->type == IBV_QPT_XRC_SEND)
		rocemu_rc_req_run(qp);
}

/* An initiator only sends requests and a target only answers them: the rest is dropped. */
static void xrc_rx(struct rocemu_qp *qp, const struct rocemu_pkt *pkt)
{
	bool request = pkt->info->flags & ROCEMU_OPF_REQ;

	if (request != (qp->type == IBV_QPT_XRC_RECV)) {
		qp->owner->dev->rx_dropped++;
		rocemu_log(ROCEMU_LOG_DEBUG, "%s qp 0x%06x psn 0x%06x rx %s: not for an XRC %s, dropped",
			   qp->owner->dev->name, qp->qpn, pkt->psn, pkt->info->name,
			   request ? "initiator" : "target");
		return;
	}
	rocemu_rc_rx(qp, pkt);
}

/* A new target belongs to the domain of its owner's open qp->xrcd_open, which it holds. */
static void xrc_created(struct rocemu_qp *qp, const struct rocemu_create_qp_req *req)
{
	if (qp->type != IBV_QPT_XRC_RECV)
		return;
	qp->xrcd_open->users++;
	rocemu_list_init(&qp->xrc_refs);
	rocemu_list_add_tail(&qp->xrcd_open->xrcd->tgt_qps, &qp->xrc_node);
}

int rocemu_xrc_open(struct rocemu_client *c, const struct rocemu_open_qp_req *req)
{
	struct rocemu_xrcd_open *o = rocemu_xrcd_lookup(c, req->xrcd);
	struct rocemu_xrc_ref *ref;
	struct rocemu_qp *qp;
	int err;

	if (!o || req->qp_type != IBV_QPT_XRC_RECV)
		return -EINVAL;
	qp = rocemu_idtable_get(&c->emu->qps, req->qpn);
	if (!qp || qp->type != IBV_QPT_XRC_RECV || qp->xrcd_open->xrcd != o->xrcd)
		return -EINVAL;
	ref = calloc(1, sizeof(*ref));
	if (!ref)
		return -ENOMEM;
	/* A QP handle of the client's, as uverbs makes one, on a QP of the device's already. */
	err = rocemu_charge_account(c->charge.acct, NULL, &ref->charge, ROCEMU_RES_QP,
				    ROCEMU_OBJ_ONLY);
	if (err) {
		free(ref);
		return err;
	}
	ref->client = c;
	ref->xrcd_open = o;
	ref->user_qp = req->user_qp;
	o->users++;
	rocemu_list_add_tail(&qp->xrc_refs, &ref->qp_node);
	rocemu_list_add_tail(&c->xrc_refs, &ref->client_node);
	rocemu_log(ROCEMU_LOG_DEBUG, "%s qp 0x%06x opened by pid %d", c->dev->name, qp->qpn,
		   (int)c->pid);
	return 0;
}

/* c holds a reference to the target qp through ibv_open_qp. */
static bool xrc_opened_by(const struct rocemu_qp *qp, const struct rocemu_client *c)
{
	struct rocemu_xrc_ref *ref;

	if (qp->type != IBV_QPT_XRC_RECV)
		return false;
	rocemu_list_for_each(ref, &qp->xrc_refs, struct rocemu_xrc_ref, qp_node)
		if (ref->client == c)
			return true;
	return false;
}

static void ref_free(struct rocemu_xrc_ref *ref)
{
	ref->xrcd_open->users--;
	rocemu_list_del(&ref->qp_node);
	rocemu_list_del(&ref->client_node);
	rocemu_uncharge(&ref->charge);
	free(ref);
}

/*
 * c lets go of qp. A target's: one of c's ibv_open_qp references, else its
 * owner's, which passes to the holder of another reference; true when that
 * was the last. An initiator goes at once.
 */
static bool xrc_release(struct rocemu_client *c, struct rocemu_qp *qp)
{
	struct rocemu_xrc_ref *ref, *tmp;

	if (qp->type != IBV_QPT_XRC_RECV)
		return true;
	rocemu_list_for_each_safe(ref, tmp, &qp->xrc_refs, struct rocemu_xrc_ref, qp_node) {
		if (ref->client != c && qp->owner == c) {
			/* The owner's reference goes: another holder's becomes it. */
			qp->xrcd_open->users--;
			qp->xrcd_open = ref->xrcd_open;
			ref->xrcd_open->users++;
			rocemu_obj_move(&rocemu_qp_kind, qp, ref->client);
			rocemu_qp_mem_update(qp);
			qp->user_qp = ref->user_qp;
			rocemu_log(ROCEMU_LOG_DEBUG, "%s qp 0x%06x now of pid %d", c->dev->name,
				   qp->qpn, (int)ref->client->pid);
		} else if (ref->client != c) {
			continue;
		}
		ref_free(ref);
		return false;
	}
	return true;
}

/* RC's destroy; a target also leaves its domain, which it holds no more. */
static void xrc_destroy(struct rocemu_qp *qp)
{
	struct rocemu_xrc_ref *ref, *tmp;

	rocemu_rc_destroy(qp);
	if (qp->type != IBV_QPT_XRC_RECV)
		return;
	rocemu_list_for_each_safe(ref, tmp, &qp->xrc_refs, struct rocemu_xrc_ref, qp_node)
		ref_free(ref);
	rocemu_list_del(&qp->xrc_node);
	qp->xrcd_open->users--;
}

void rocemu_xrc_client_release(struct rocemu_client *c)
{
	struct rocemu_xrc_ref *ref, *tmp;

	rocemu_list_for_each_safe(ref, tmp, &c->xrc_refs, struct rocemu_xrc_ref, client_node)
		ref_free(ref);
}

/*
 * The SRQ an XRCETH names takes the target qp's messages from now on:
 * -EINVAL (IBTA: NAK invalid request) when it is no XRC SRQ of qp's domain.
 */
static int xrc_srq_select(struct rocemu_qp *qp, uint32_t srqn)
{
	struct rocemu_srq *srq;

	if (qp->srq && qp->srq->srqn == srqn)
		return 0;
	srq = rocemu_idtable_get(&qp->owner->emu->srqs, srqn);
	/* IBTA A14: an SRQ of another domain is an invalid request. */
	if (!srq || !srq->xrcd_open || srq->xrcd_open->xrcd != qp->xrcd_open->xrcd)
		return -EINVAL;
	/* A message names one SRQ: its receive WQE stays where it was taken. */
	if (qp->rc->resp.in_msg != RC_MSG_NONE || qp->rc->resp.has_recv)
		return -EINVAL;
	qp->srq = srq;
	rocemu_qp_mem_update(qp);
	return 0;
}

/* The target's SRQ went, and the WQE it took from there with it. */
static void xrc_srq_gone(struct rocemu_qp *qp)
{
	qp->srq = NULL;
	rocemu_qp_mem_update(qp);
	qp->rc->resp.has_recv = false;
}

/* A target takes each message's receive WQE from the SRQ its XRCETH names. */
static const struct rocemu_rc_variant xrc_variant = {
	.srq_select = xrc_srq_select,
};

static int xrc_init(struct rocemu_qp *qp)
{
	int err = rocemu_rc_init(qp);

	qp->rc->opclass = ROCEMU_OP_TRANSPORT_XRC;
	qp->rc->variant = &xrc_variant;
	return err;
}

const struct rocemu_transport_ops rocemu_xrc_transport = {
	.name = "XRC",
	.connected = true,
	.init = xrc_init,
	.created = xrc_created,
	.opened_by = xrc_opened_by,
	.release = xrc_release,
	.srq_gone = xrc_srq_gone,
	.destroy = xrc_destroy,
	.modified = rocemu_rc_modified,
	.post = xrc_post,
	.flush = rocemu_rc_flush,
	.rx = xrc_rx,
	.timer = rocemu_rc_timer,
	.sq_draining = rocemu_rc_sq_draining,
};
