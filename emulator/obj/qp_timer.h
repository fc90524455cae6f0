/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * A QP's timers, in one place: one loop timer per kind, armed and
 * cancelled here. When one expires the loop calls this module,
 * which hands the kind to the QP's transport (ops->timer). Destroying a
 * QP cancels all.
 */
#ifndef ROCEMU_EMULATOR_QP_TIMER_H
#define ROCEMU_EMULATOR_QP_TIMER_H

#include <stdbool.h>
#include <stdint.h>

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
	struct rocemu_qp *qp;
	uint64_t id;			/* the loop's timer; 0: not armed (read as such on the data path) */
};

/* Each timer names its QP, for the loop's callback: once, at creation. */
void rocemu_qp_timers_init(struct rocemu_qp *qp);
/* Arm kind to expire at deadline_ns (rocemu_now_ns() time), unless it is armed already. */
void rocemu_qp_timer_arm(struct rocemu_qp *qp, enum rocemu_qp_timer_kind kind,
			 uint64_t deadline_ns);
/* Cancel kind; nothing happens if it is not armed. */
void rocemu_qp_timer_cancel(struct rocemu_qp *qp, enum rocemu_qp_timer_kind kind);
bool rocemu_qp_timer_armed(const struct rocemu_qp *qp, enum rocemu_qp_timer_kind kind);
/* Cancel every timer of qp (reset, destroy). */
void rocemu_qp_timers_cancel(struct rocemu_qp *qp);

#endif /* ROCEMU_EMULATOR_QP_TIMER_H */
