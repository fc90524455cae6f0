/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The one source of receive WQEs every transport's responder takes from:
 * an RQ ring (a QP's own or a WQ's), or an SRQ, with the SRQ's limit and
 * error events.
 */
#ifndef ROCEMU_EMULATOR_RECV_WQE_H
#define ROCEMU_EMULATOR_RECV_WQE_H

#include <stdint.h>

struct rocemu_device;
struct rocemu_qp;
struct rocemu_recv_wqe;
struct rocemu_rq_ring;
struct rocemu_srq;

/*
 * The next receive WQE of qp: from its SRQ when it has one (fires the
 * limit event when the SRQ drops below an armed limit), else the RQ WQE
 * at *rq_ci, which then advances. w->counter is what the CQE's
 * wqe_counter carries. Returns 0, -EAGAIN when none is posted (RNR), or
 * -EINVAL (logged) when the queue is broken, its doorbell past the ring
 * (an SRQ raises IBV_EVENT_SRQ_ERR once and stays so): the QP fails,
 * with IBV_EVENT_QP_FATAL.
 */
int rocemu_recv_wqe_next(struct rocemu_qp *qp, uint32_t *rq_ci, struct rocemu_recv_wqe *w);
/*
 * The same from srq when not NULL, else from the ring rq of dev at
 * *rq_ci (a WQ's: rocemu_wq_rq_ring): what rocemu_recv_wqe_next takes
 * from a QP's queues.
 */
int rocemu_recv_wqe_take(const struct rocemu_device *dev, struct rocemu_srq *srq,
			 const struct rocemu_rq_ring *rq, uint32_t *rq_ci, struct rocemu_recv_wqe *w);

#endif /* ROCEMU_EMULATOR_RECV_WQE_H */
