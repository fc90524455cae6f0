/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/obj/qp.h"

#include <errno.h>
#include <linux/capability.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emulator/core/tracer.h"
#include "emulator/mem/pd_mr.h"
#include "emulator/obj/cq.h"
#include "emulator/obj/qp_layout.h"
#include "emulator/obj/qp_state.h"
#include "emulator/obj/qp_timer.h"
#include "emulator/obj/qp_vendor_flags.h"
#include "emulator/obj/srq.h"
#include "emulator/obj/xrcd.h"
#include "net/roce/roce_hdr.h"
#include "rocemu/log.h"
#include "rocemu/ring.h"

/* Every QP type verbs knows, by enum ibv_qp_type (IBV_QPT_DRIVER is 0xff). */
static const char *const qp_type_names[256] = {
	[IBV_QPT_RC] = "RC",
	[IBV_QPT_UC] = "UC",
	[IBV_QPT_UD] = "UD",
	[IBV_QPT_RAW_PACKET] = "RAW_PACKET",
	[IBV_QPT_XRC_SEND] = "XRC_SEND",
	[IBV_QPT_XRC_RECV] = "XRC_RECV",
	[IBV_QPT_DRIVER] = "DRIVER",
	[ROCEMU_QPT_DCI] = "DCI",
	[ROCEMU_QPT_DCT] = "DCT",
};

/* The name of a type verbs knows, NULL for another number. */
static const char *qp_type_known(uint32_t type)
{
	return type < sizeof(qp_type_names) / sizeof(qp_type_names[0]) ? qp_type_names[type] : NULL;
}

const char *rocemu_qp_type_name(enum ibv_qp_type type)
{
	const char *name = qp_type_known(type);

	return name ? name : "?";
}

/* A known type without a transport is not supported; an unknown one is invalid. */
static int qp_type_check(const struct rocemu_emu *emu, uint32_t type,
			 const struct rocemu_transport_ops **ops)
{
	*ops = emu->transport_of_qp_type(type);
	if (*ops)
		return 0;
	return qp_type_known(type) ? -EOPNOTSUPP : -EINVAL;
}

/*
 * Create flags as the kernel answers them: a source QPN needs CAP_NET_RAW
 * (uverbs, EPERM) and a UD QP (mlx5's process_create_flags, EOPNOTSUPP);
 * RAW_PACKET's own flags and a TSO header are for RAW_PACKET alone.
 */
static int create_flags_check(const struct rocemu_client *c, const struct rocemu_create_qp_req *req)
{
	bool raw = req->qp_type == IBV_QPT_RAW_PACKET;

	if (req->create_flags & ~(uint32_t)(IBV_QP_CREATE_BLOCK_SELF_MCAST_LB |
					    IBV_QP_CREATE_SOURCE_QPN | ROCEMU_QP_CREATE_RAW_FLAGS))
		return -EINVAL;
	if ((req->create_flags & ROCEMU_QP_CREATE_RAW_FLAGS) && !raw)
		return -EOPNOTSUPP;
	if (req->max_tso_header && !raw)
		return -EINVAL;
	if (!(req->create_flags & IBV_QP_CREATE_SOURCE_QPN))
		return 0;
	if (!rocemu_client_capable(c, CAP_NET_RAW))
		return -EPERM;
	if (req->qp_type != IBV_QPT_UD)
		return -EOPNOTSUPP;
	return req->source_qpn & ~ROCEMU_QPN_MASK ? -EINVAL : 0;
}

/* What qp uses (PD, CQs, SRQ; an XRC target none of them) counts it (by +1 or -1). */
static void qp_uses(struct rocemu_qp *qp, int n)
{
	if (qp->pd)
		qp->pd->users += n;
	if (qp->send_cq)
		qp->send_cq->users += n;
	if (qp->recv_cq)
		qp->recv_cq->users += n;
	if (qp->srq && qp->type != IBV_QPT_XRC_RECV)
		qp->srq->users += n;
}

int rocemu_qp_create(struct rocemu_client *c, const struct rocemu_create_qp_req *req,
		     struct rocemu_create_qp_resp *resp, int *fd)
{
	const struct rocemu_transport_ops *ops;
	struct rocemu_pd *pd;
	struct rocemu_cq *send_cq, *recv_cq;
	struct rocemu_srq *srq = NULL;
	struct rocemu_xrcd_open *xrcd_open = NULL;
	struct ibv_qp_cap want = req->cap;
	bool tgt = req->qp_type == IBV_QPT_XRC_RECV;
	/* A DCI is an initiator too: a send queue only. */
	bool ini = req->qp_type == IBV_QPT_XRC_SEND || req->qp_type == ROCEMU_QPT_DCI;
	bool dct = req->qp_type == ROCEMU_QPT_DCT;
	/* An RSS QP is a TIR: its table's WQs receive, it has no queue or CQ (mlx5). */
	bool rss = req->qp_type == IBV_QPT_RAW_PACKET && req->rwq_ind_tbl != ROCEMU_NO_HANDLE;
	struct rocemu_qp *qp;
	int err, ring_fd;

	err = qp_type_check(c->emu, req->qp_type, &ops);
	if (!err)
		err = create_flags_check(c, req);
	if (!err)
		err = rocemu_qp_vendor_check(req);
	if (!err && ops->create_check)
		err = ops->create_check(c, req);
	if (err)
		return err;
	pd = rocemu_pd_lookup(c, req->pdn);
	send_cq = rocemu_cq_lookup(c, req->send_cqn);
	recv_cq = rocemu_cq_lookup(c, req->recv_cqn);
	if (req->srqn != ROCEMU_NO_HANDLE && !tgt && !ini && !rss) {
		srq = rocemu_srq_lookup(c, req->srqn);
		/* uverbs create_qp: an XRC SRQ serves XRC targets only. */
		if (!srq || srq->xrcd_open)
			return -EINVAL;
		/* Receives come from the SRQ: the QP's own receive caps are ignored (no RQ). */
		want.max_recv_wr = 0;
		want.max_recv_sge = 0;
	}
	/* mlx5: a DCT receives through its SRQ and has no send queue. */
	if (dct) {
		if (!srq)
			return -EINVAL;
		want.max_send_wr = want.max_send_sge = want.max_inline_data = 0;
	}
	/* uverbs: an XRC target is the domain's, with no PD, CQ or queue; an initiator has no RQ. */
	if (tgt) {
		xrcd_open = rocemu_xrcd_lookup(c, req->xrcd);
		if (!xrcd_open)
			return -EINVAL;
		memset(&want, 0, sizeof(want));
		pd = NULL;
		send_cq = recv_cq = NULL;
	} else if (ini) {
		want.max_recv_wr = 0;
		want.max_recv_sge = 0;
		recv_cq = NULL;
	} else if (rss) {
		memset(&want, 0, sizeof(want));
		send_cq = recv_cq = NULL;
	}
	if (rss ? !pd : !tgt && (!pd || !send_cq || (!recv_cq && !ini)))
		return -EINVAL;
	memset(resp, 0, sizeof(*resp));
	/* mlx5 calc_send_wqe: a RAW_PACKET WQE has room for its TSO header besides its data. */
	err = rocemu_qp_layout(c->dev->format, &want, req->qp_type, req->max_tso_header,
			       req->inl_recv_sz, &resp->cap, &resp->layout);
	if (err)
		return err;
	if (srq)
		resp->cap.max_recv_sge = 0;	/* mlx5: rq.max_gs 0 with an SRQ */
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return -ENOMEM;
	rocemu_qp_timers_init(qp);
	err = rocemu_charge(c, &qp->charge, ROCEMU_RES_QP, rocemu_ring_amount(resp->layout.size));
	if (err)
		goto fail;
	err = rocemu_obj_add(c->emu, &rocemu_qp_kind, c, qp);
	if (err)
		goto fail_charge;
	ring_fd = rocemu_shm_create("rocemu-qp", resp->layout.size, &qp->rings);
	if (ring_fd < 0) {
		err = ring_fd;
		rocemu_obj_remove(c->emu, &rocemu_qp_kind, qp);
		goto fail_charge;
	}
	resp->layout.qpn = qp->qpn;
	qp->layout = resp->layout;
	qp->ops = ops;
	qp->type = req->qp_type;	/* the transport's init may look at it */
	err = ops->init(qp);
	if (err) {
		rocemu_shm_destroy(&qp->rings);
		close(ring_fd);
		rocemu_obj_remove(c->emu, &rocemu_qp_kind, qp);
		goto fail_charge;
	}
	qp->create_flags = req->create_flags;
	qp->source_qpn = req->create_flags & IBV_QP_CREATE_SOURCE_QPN ? req->source_qpn : qp->qpn;
	qp->pd = pd;
	qp->send_cq = send_cq;
	qp->recv_cq = recv_cq;
	qp->srq = srq;
	rocemu_qp_mem_update(qp);
	qp->sq_sig_all = req->sq_sig_all;
	rocemu_qp_vendor_setup(qp, req->vendor_flags);
	qp->user_qp = req->user_qp;
	qp->cap = resp->cap;
	qp->layout = resp->layout;
	qp->attr.qp_state = IBV_QPS_RESET;
	qp->xrcd_open = xrcd_open;
	qp_uses(qp, 1);
	if (ops->created)
		ops->created(qp, req);
	*fd = ring_fd;
	rocemu_log(ROCEMU_LOG_DEBUG,
		   "%s qp 0x%06x create %s pd %u sq %u x %u rq %u x %u",
		   c->dev->name, qp->qpn, rocemu_qp_type_name(qp->type), pd ? pd->pdn : 0,
		   qp->cap.max_send_wr, qp->cap.max_send_sge, qp->cap.max_recv_wr,
		   qp->cap.max_recv_sge);
	return 0;

fail_charge:
	rocemu_uncharge(&qp->charge);
fail:
	free(qp);
	return err;
}

void rocemu_qp_enter_state(struct rocemu_qp *qp, enum ibv_qp_state next, const char *why)
{
	enum ibv_qp_state prev = qp->attr.qp_state;

	rocemu_log(next == IBV_QPS_ERR ? ROCEMU_LOG_INFO : ROCEMU_LOG_DEBUG, "%s qp 0x%06x %s->%s: %s",
		   qp->owner->dev->name, qp->qpn, rocemu_qp_state_name(prev),
		   rocemu_qp_state_name(next), why);
	if ((prev == IBV_QPS_ERR) != (next == IBV_QPS_ERR))
		rocemu_emu_qp_errors(qp->owner->emu, next == IBV_QPS_ERR ? 1 : -1);
	qp->attr.qp_state = next;
	qp->attr.cur_qp_state = next;
	if (rocemu_tracing(qp->owner->emu))
		rocemu_trace_qp_state(qp->owner->dev, qp->qpn, rocemu_qp_state_name(prev),
				      rocemu_qp_state_name(next), why);
}

struct rocemu_qp *rocemu_qp_lookup(struct rocemu_client *c, uint32_t qpn)
{
	struct rocemu_qp *qp = rocemu_obj_lookup(c->emu, &rocemu_qp_kind, c, qpn);

	if (qp)
		return qp;
	/* Another's QP is named only through an ibv_open_qp reference (XRC targets). */
	qp = rocemu_idtable_get(&c->emu->qps, qpn);
	return qp && qp->ops->opened_by && qp->ops->opened_by(qp, c) ? qp : NULL;
}

void rocemu_qp_mem_update(struct rocemu_qp *qp)
{
	const struct rocemu_srq *from = qp->type == IBV_QPT_XRC_RECV ? qp->srq : NULL;

	qp->mem = (struct rocemu_mem_owner){ .client = from ? from->owner : qp->owner,
					     .pd = from ? from->pd : qp->pd, .qpn = qp->qpn };
}

struct rocemu_cq *rocemu_qp_recv_cq(const struct rocemu_qp *qp)
{
	return qp->srq && qp->srq->cq ? qp->srq->cq : qp->recv_cq;
}

uint32_t rocemu_qp_recv_srqn(const struct rocemu_qp *qp)
{
	return qp->srq ? qp->srq->srqn : 0;
}

int rocemu_qp_query(struct rocemu_client *c, const struct rocemu_query_qp_req *req,
		    struct rocemu_query_qp_resp *resp)
{
	struct rocemu_qp *qp = rocemu_qp_lookup(c, req->qpn);

	if (!qp)
		return -EINVAL;
	memset(resp, 0, sizeof(*resp));
	resp->attr = qp->attr;
	resp->attr.cur_qp_state = qp->attr.qp_state;
	resp->attr.cap = qp->cap;
	resp->attr.sq_draining = qp->ops->sq_draining(qp);
	resp->cap = qp->cap;
	resp->sq_sig_all = qp->sq_sig_all;
	resp->qp_type = qp->type;
	return 0;
}

void rocemu_qp_free(struct rocemu_emu *emu, struct rocemu_qp *qp)
{
	rocemu_log(ROCEMU_LOG_DEBUG, "%s qp 0x%06x destroy", qp->owner->dev->name, qp->qpn);
	rocemu_qp_timers_cancel(qp);
	rocemu_client_unwatch_direct(qp->owner, &qp->direct);
	if (qp->attr.qp_state == IBV_QPS_ERR)
		rocemu_emu_qp_errors(emu, -1);
	qp->ops->destroy(qp);
	rocemu_obj_remove(emu, &rocemu_qp_kind, qp);
	qp_uses(qp, -1);
	rocemu_uncharge(&qp->charge);
	rocemu_shm_destroy(&qp->rings);
	free(qp);
}

int rocemu_qp_destroy(struct rocemu_client *c, uint32_t qpn)
{
	struct rocemu_qp *qp = rocemu_qp_lookup(c, qpn);

	if (!qp)
		return -EINVAL;
	/* ibv_attach_mcast(3); uverbs counts a flow as a user of its QP (ib_destroy_qp_user). */
	if (qp->mcast_groups || qp->flows)
		return -EBUSY;
	rocemu_qp_release(c, qp);
	return 0;
}

void rocemu_qp_release(struct rocemu_client *c, struct rocemu_qp *qp)
{
	if (!qp->ops->release || qp->ops->release(c, qp))
		rocemu_qp_free(c->emu, qp);
}

/* Its context closing lets go of it as ibv_destroy_qp would, for XRC targets too. */
static void qp_owner_gone(struct rocemu_emu *emu, struct rocemu_qp *qp)
{
	rocemu_qp_release(qp->owner, qp);
}

/*
 * QP numbers go round their whole range before one comes back, as NICs
 * hand them out: a peer that still knows the number of a QP gone (UCX's
 * UD keeps a closed connection for minutes) does not meet a new QP under
 * it at once.
 */
ROCEMU_OBJ_KIND(rocemu_qp_kind, struct rocemu_qp, struct rocemu_client, qps, qps, owner, qpn, node,
		qp_owner_gone, .first = ROCEMU_FIRST_QPN, .max = ROCEMU_MAX_QP * ROCEMU_MAX_DEVICES,
		.cyclic = true);
