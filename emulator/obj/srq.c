/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/obj/srq.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emulator/mem/pd_mr.h"
#include "emulator/obj/async_event.h"
#include "emulator/obj/cq.h"
#include "emulator/obj/qp.h"
#include "rocemu/log.h"

#define DBREC_BYTES 64

static void srq_layout(const struct rocemu_srq_sizes *sizes, struct rocemu_srq_layout *layout)
{
	memset(layout, 0, sizeof(*layout));
	layout->wqe_cnt = sizes->wqes;
	layout->wqe_shift = sizes->wqe_shift;
	layout->buf_offset = 0;
	layout->dbrec_offset = rocemu_page_align((size_t)sizes->wqes << sizes->wqe_shift);
	layout->size = rocemu_page_align(layout->dbrec_offset + DBREC_BYTES);
}

int rocemu_srq_create(struct rocemu_client *c, const struct rocemu_create_srq_req *req,
		      struct rocemu_create_srq_resp *resp, int *fd)
{
	struct rocemu_pd *pd = rocemu_pd_lookup(c, req->pdn);
	bool xrc = req->srq_type == IBV_SRQT_XRC;
	struct rocemu_xrcd_open *xrcd_open = xrc ? rocemu_xrcd_lookup(c, req->xrcd) : NULL;
	struct rocemu_cq *cq = xrc ? rocemu_cq_lookup(c, req->cqn) : NULL;
	struct rocemu_srq_sizes sizes;
	struct rocemu_srq *srq;
	int err, ring_fd;

	/* mlx5_create_srq: EINVAL past max_srq_wr or max_srq_sge. */
	if (!pd || (req->srq_type != IBV_SRQT_BASIC && !xrc) || (xrc && (!xrcd_open || !cq)) ||
	    req->attr.max_wr > ROCEMU_MAX_SRQ_WR || req->attr.max_sge > ROCEMU_MAX_SRQ_SGE ||
	    rocemu_srq_size(req->attr.max_wr, req->attr.max_sge, &sizes))
		return -EINVAL;
	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return -ENOMEM;
	srq_layout(&sizes, &srq->layout);
	err = rocemu_charge(c, &srq->charge, ROCEMU_RES_SRQ, rocemu_ring_amount(srq->layout.size));
	if (err)
		goto fail;
	err = rocemu_obj_add(c->emu, &rocemu_srq_kind, c, srq);
	if (err)
		goto fail_charge;
	srq->layout.srqn = srq->srqn;
	ring_fd = rocemu_shm_create("rocemu-srq", srq->layout.size, &srq->ring);
	if (ring_fd < 0) {
		err = ring_fd;
		rocemu_obj_remove(c->emu, &rocemu_srq_kind, srq);
		goto fail_charge;
	}
	rocemu_srq_caps(&sizes, &srq->max_wr, &srq->max_sge);
	if (srq->max_sge > ROCEMU_MAX_SRQ_SGE)
		srq->max_sge = ROCEMU_MAX_SRQ_SGE;
	srq->pd = pd;
	srq->user_srq = req->user_srq;
	pd->users++;
	srq->xrcd_open = xrcd_open;
	srq->cq = cq;
	if (xrc) {
		xrcd_open->users++;
		cq->users++;
	}
	memset(resp, 0, sizeof(*resp));
	resp->layout = srq->layout;
	resp->attr.max_wr = srq->max_wr;
	resp->attr.max_sge = srq->max_sge;
	*fd = ring_fd;
	rocemu_log(ROCEMU_LOG_DEBUG, "%s srq 0x%06x create pd %u %u x %u", c->dev->name,
		   srq->srqn, pd->pdn, srq->max_wr, srq->max_sge);
	return 0;

fail_charge:
	rocemu_uncharge(&srq->charge);
fail:
	free(srq);
	return err;
}

struct rocemu_srq *rocemu_srq_lookup(struct rocemu_client *c, uint32_t srqn)
{
	return rocemu_obj_lookup(c->emu, &rocemu_srq_kind, c, srqn);
}

int rocemu_srq_modify(struct rocemu_client *c, const struct rocemu_modify_srq_req *req)
{
	struct rocemu_srq *srq = rocemu_srq_lookup(c, req->srqn);

	/* mlx5_ib_modify_srq: no resizing; a limit below the ring's entries. */
	if (!srq || (req->attr_mask & ~(uint32_t)(IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT)) ||
	    (req->attr_mask & IBV_SRQ_MAX_WR))
		return -EINVAL;
	if (req->attr_mask & IBV_SRQ_LIMIT) {
		if (req->attr.srq_limit >= srq->layout.wqe_cnt)
			return -EINVAL;
		srq->limit = req->attr.srq_limit;
		rocemu_log(ROCEMU_LOG_DEBUG, "%s srq 0x%06x limit %u armed", c->dev->name,
			   srq->srqn, srq->limit);
	}
	return 0;
}

int rocemu_srq_query(struct rocemu_client *c, uint32_t srqn, struct rocemu_query_srq_resp *resp)
{
	struct rocemu_srq *srq = rocemu_srq_lookup(c, srqn);

	if (!srq)
		return -EINVAL;
	memset(resp, 0, sizeof(*resp));
	resp->attr.max_wr = srq->max_wr;
	resp->attr.max_sge = srq->max_sge;
	resp->attr.srq_limit = srq->limit;
	return 0;
}

/* An XRC SRQ goes: the domain's targets that took from it forget it. */
static void targets_forget(struct rocemu_srq *srq)
{
	struct rocemu_qp *qp;

	rocemu_list_for_each(qp, &srq->xrcd_open->xrcd->tgt_qps, struct rocemu_qp, xrc_node)
		if (qp->srq == srq)
			qp->ops->srq_gone(qp);
}

static void srq_free(struct rocemu_emu *emu, struct rocemu_srq *srq)
{
	rocemu_log(ROCEMU_LOG_DEBUG, "%s srq 0x%06x destroy", srq->owner->dev->name, srq->srqn);
	rocemu_obj_remove(emu, &rocemu_srq_kind, srq);
	srq->pd->users--;
	if (srq->xrcd_open) {
		targets_forget(srq);
		srq->xrcd_open->users--;
		srq->cq->users--;
	}
	rocemu_uncharge(&srq->charge);
	rocemu_shm_destroy(&srq->ring);
	free(srq);
}

int rocemu_srq_destroy(struct rocemu_client *c, uint32_t srqn)
{
	struct rocemu_srq *srq = rocemu_srq_lookup(c, srqn);

	if (!srq)
		return -EINVAL;
	if (srq->users)
		return -EBUSY;
	srq_free(c->emu, srq);
	return 0;
}

ROCEMU_OBJ_KIND(rocemu_srq_kind, struct rocemu_srq, struct rocemu_client, srqs, srqs, owner, srqn,
		node, srq_free, .first = 1, .max = ROCEMU_MAX_SRQ * ROCEMU_MAX_DEVICES);

void rocemu_srq_qp_errored(struct rocemu_qp *qp)
{
	if (qp->srq)
		rocemu_async_event_qp(qp, IBV_EVENT_QP_LAST_WQE_REACHED);
}
