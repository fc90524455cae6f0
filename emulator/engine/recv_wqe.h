/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The one source of receive WQEs every transport's responder takes from:
 * the QP's own RQ, or its SRQ, with the SRQ's limit and error events.
 */
#ifndef ROCEMU_EMULATOR_RECV_WQE_H
#define ROCEMU_EMULATOR_RECV_WQE_H

#include <stdint.h>

struct rocemu_qp;
struct rocemu_recv_wqe;

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

#endif /* ROCEMU_EMULATOR_RECV_WQE_H */
