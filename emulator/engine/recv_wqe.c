/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/engine/recv_wqe.h"

#include <errno.h>

#include "emulator/ring/format.h"
#include "emulator/obj/async_event.h"
#include "emulator/obj/qp.h"
#include "emulator/obj/srq.h"
#include "rocemu/log.h"

/*
 * A doorbell past the ring breaks the SRQ for good, as an SRQ catastrophic
 * error does a ConnectX's: IBV_EVENT_SRQ_ERR once, and no WQE is taken again.
 */
static int srq_broken(struct rocemu_srq *srq)
{
	if (!srq->broken) {
		srq->broken = true;
		rocemu_log(ROCEMU_LOG_INFO, "%s srq 0x%06x: doorbell past the %u WQEs of the ring from 0x%04x, event SRQ_ERR",
			   srq->owner->dev->name, srq->srqn, srq->layout.wqe_cnt,
			   (uint16_t)srq->consumed);
		rocemu_async_event(srq->owner, srq->user_srq, IBV_EVENT_SRQ_ERR);
	}
	return -EINVAL;
}

/* Take the WQE along the links; the limit event once fewer than the limit are left. */
static int srq_take(struct rocemu_srq *srq, struct rocemu_recv_wqe *w)
{
	int posted = srq->broken ? -EINVAL : srq->owner->dev->format->srq_posted(srq, srq->consumed);

	if (posted < 0)
		return srq_broken(srq);
	if (!posted)
		return -EAGAIN;
	srq->next = srq->owner->dev->format->parse_srq(srq, srq->next, w);
	srq->consumed++;
	if (srq->limit && (uint32_t)posted - 1 < srq->limit) {
		rocemu_log(ROCEMU_LOG_INFO, "%s srq 0x%06x event SRQ_LIMIT_REACHED (limit %u)",
			   srq->owner->dev->name, srq->srqn, srq->limit);
		srq->limit = 0;		/* fired once, until armed again */
		rocemu_async_event(srq->owner, srq->user_srq, IBV_EVENT_SRQ_LIMIT_REACHED);
	}
	return 0;
}

int rocemu_recv_wqe_take(const struct rocemu_device *dev, struct rocemu_srq *srq,
			 const struct rocemu_rq_ring *rq, uint32_t *rq_ci, struct rocemu_recv_wqe *w)
{
	int posted;

	if (srq)
		return srq_take(srq, w);
	posted = dev->format->rq_posted(rq, *rq_ci);
	if (posted < 0)
		rocemu_log(ROCEMU_LOG_INFO, "%s %s 0x%06x: receive doorbell past the %u WQEs of the ring from 0x%04x",
			   dev->name, rq->wq ? "wq" : "qp", rq->num, rq->wqe_cnt, (uint16_t)*rq_ci);
	if (posted <= 0)
		return posted ? posted : -EAGAIN;
	dev->format->parse_recv(rq, *rq_ci, w);
	(*rq_ci)++;
	return 0;
}

int rocemu_recv_wqe_next(struct rocemu_qp *qp, uint32_t *rq_ci, struct rocemu_recv_wqe *w)
{
	struct rocemu_rq_ring rq = rocemu_qp_rq_ring(qp);

	return rocemu_recv_wqe_take(qp->owner->dev, qp->srq, &rq, rq_ci, w);
}
