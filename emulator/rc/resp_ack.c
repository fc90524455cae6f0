/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Coalesced acknowledges (IBTA 9.7.5.1.1: an ACK covers every PSN before
 * its own). The ACK a request asks for waits until the turn of the loop
 * ends, and a newer one of the same QP replaces it, so a burst of small
 * WRITEs costs one ACK and one process_vm_writev instead of one of each
 * per message. It leaves, after the data it acknowledges have landed,
 * before anything else the responder of its QP sends, before the QP fails
 * and before a control request is served: no peer and no client can tell
 * it waited, except by how many ACKs there are.
 */
#include "emulator/obj/qp.h"
#include "emulator/rc/rc.h"

#define DEFERRED_MAX 64u	/* QPs with an ACK waiting; past that, ACKs leave at once */

static struct rocemu_qp *deferred[DEFERRED_MAX];
static unsigned int ndeferred;

static void unlink_qp(struct rocemu_qp *qp)
{
	for (unsigned int i = 0; i < ndeferred; i++) {
		if (deferred[i] == qp) {
			deferred[i] = deferred[--ndeferred];
			break;
		}
	}
	qp->rc->resp.ack_deferred = false;
}

bool rocemu_rc_resp_may_wait(const struct rocemu_qp *qp)
{
	/* A DCT's responder state belongs to one connection at a time. */
	return qp->type != ROCEMU_QPT_DCT;
}

bool rocemu_rc_ack_defer(struct rocemu_qp *qp, uint32_t psn, uint8_t syndrome, uint32_t msn)
{
	struct rocemu_rc_resp *resp = &qp->rc->resp;

	if (!rocemu_rc_resp_may_wait(qp))
		return false;
	if (!resp->ack_deferred) {
		if (ndeferred == DEFERRED_MAX)
			return false;
		deferred[ndeferred++] = qp;
		resp->ack_deferred = true;
	}
	resp->ack_psn = psn;
	resp->ack_syndrome = syndrome;
	resp->ack_msn = msn;
	return true;
}

void rocemu_rc_ack_forget(struct rocemu_qp *qp)
{
	if (qp->rc->resp.ack_deferred)
		unlink_qp(qp);
}

void rocemu_rc_resp_settle(struct rocemu_qp *qp)
{
	struct rocemu_rc_resp *resp = &qp->rc->resp;

	rocemu_resp_hold_flush();
	if (!resp->ack_deferred)
		return;
	unlink_qp(qp);
	/* A held copy that failed failed the QP: its NAK went instead. */
	if (rocemu_rc_resp_active(qp))
		rocemu_rc_send_ack(qp, resp->ack_psn, resp->ack_syndrome, resp->ack_msn);
}

void rocemu_rc_settle_all(void)
{
	rocemu_resp_hold_flush();
	while (ndeferred)
		rocemu_rc_resp_settle(deferred[ndeferred - 1]);
}
