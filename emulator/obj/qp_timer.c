/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/obj/qp_timer.h"

#include "emulator/obj/qp.h"

void rocemu_qp_timers_init(struct rocemu_qp *qp)
{
	for (int kind = 0; kind < ROCEMU_QP_TIMER__COUNT; kind++)
		qp->timers[kind].qp = qp;
}

/* The loop's callback of every QP timer (arg: the rocemu_qp_timer): it hands the kind on. */
static void timer_expired(void *arg)
{
	struct rocemu_qp_timer *t = arg;
	struct rocemu_qp *qp = t->qp;

	t->id = 0;
	qp->ops->timer(qp, (enum rocemu_qp_timer_kind)(t - qp->timers));
}

void rocemu_qp_timer_arm(struct rocemu_qp *qp, enum rocemu_qp_timer_kind kind,
			 uint64_t deadline_ns)
{
	struct rocemu_qp_timer *t = &qp->timers[kind];

	if (t->id)
		return;
	t->id = rocemu_loop_timer_add(qp->owner->emu->loop, deadline_ns, timer_expired, t);
}

void rocemu_qp_timer_cancel(struct rocemu_qp *qp, enum rocemu_qp_timer_kind kind)
{
	struct rocemu_qp_timer *t = &qp->timers[kind];

	if (t->id)
		rocemu_loop_timer_cancel(qp->owner->emu->loop, t->id);
	t->id = 0;
}

bool rocemu_qp_timer_armed(const struct rocemu_qp *qp, enum rocemu_qp_timer_kind kind)
{
	return qp->timers[kind].id != 0;
}

void rocemu_qp_timers_cancel(struct rocemu_qp *qp)
{
	for (int kind = 0; kind < ROCEMU_QP_TIMER__COUNT; kind++)
		rocemu_qp_timer_cancel(qp, (enum rocemu_qp_timer_kind)kind);
}
