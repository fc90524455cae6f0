/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/obj/qp_timer.h"

#include "emulator/obj/qp.h"

/* The callback of every QP timer (arg: the rocemu_qp_timer): it hands the kind on. */
static void timer_expired(void *arg)
{
	struct rocemu_qp_timer *t = arg;
	struct rocemu_qp *qp = t->qp;

	qp->ops->timer(qp, (enum rocemu_qp_timer_kind)(t - qp->timers));
}

void rocemu_qp_timers_init(struct rocemu_qp *qp)
{
	for (int kind = 0; kind < ROCEMU_QP_TIMER__COUNT; kind++) {
		qp->timers[kind].qp = qp;
		rocemu_loop_timer_init(&qp->timers[kind].timer, timer_expired, &qp->timers[kind]);
	}
}

void rocemu_qp_timers_cancel(struct rocemu_qp *qp)
{
	for (int kind = 0; kind < ROCEMU_QP_TIMER__COUNT; kind++)
		rocemu_qp_timer_cancel(qp, (enum rocemu_qp_timer_kind)kind);
}
