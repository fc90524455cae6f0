/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * A QP's timers: one of the loop's embedded timers per kind, armed and
 * disarmed through qp.h's inlines. When one expires the loop calls this
 * module, which hands the kind to the QP's transport (ops->timer).
 * Destroying a QP cancels all.
 */
#ifndef ROCEMU_EMULATOR_QP_TIMER_H
#define ROCEMU_EMULATOR_QP_TIMER_H

#include <stdbool.h>
#include <stdint.h>

#include "net/loop/loop.h"

struct rocemu_qp;

enum rocemu_qp_timer_kind {
	ROCEMU_QP_TIMER_RETRY,		/* local ACK timeout: resend, or fail when retries are spent */
	ROCEMU_QP_TIMER_RNR,		/* RNR NAK wait: resend when it ends */
	ROCEMU_QP_TIMER_CQ_LOST,	/* a CQ refused a CQE: fail once the current pass ends */
	ROCEMU_QP_TIMER_RESP,		/* responses owed: the next burst, on the next turn */
	ROCEMU_QP_TIMER_TX,		/* more to send, and no ACK to pace it: the loop's next turn */
	ROCEMU_QP_TIMER__COUNT,
};

struct rocemu_qp_timer {
	struct rocemu_loop_timer timer;	/* armed where the QP's engines need it (qp.h) */
	struct rocemu_qp *qp;
};

/* Each timer names its QP and kind for the loop's callback: once, at creation. */
void rocemu_qp_timers_init(struct rocemu_qp *qp);
/* Cancel every timer of qp (reset, destroy). */
void rocemu_qp_timers_cancel(struct rocemu_qp *qp);

#endif /* ROCEMU_EMULATOR_QP_TIMER_H */
