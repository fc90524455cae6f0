/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The requester's stage: consecutive messages of one QP whose payload
 * comes from their WQEs wait here during one run of the requester, then
 * leave together in order (rocemu_rc_send_msgs), the payloads of several
 * read by one process_vm_readv. Each keeps a copy of its WQE (the parse
 * cache moves on to the next) and the requester's state before it, so a
 * failed read puts the requester back where that message began.
 */
#include <stddef.h>
#include <string.h>

#include "emulator/obj/qp.h"
#include "emulator/rc/rc.h"

/* Where the requester stood before a staged message: what a failed read restores. */
struct staged_from {
	uint32_t pos, cursor_psn, sent_psn;
};

/* One stage: the daemon is single-threaded, and a run nested in a flush sends at once. */
static struct {
	const struct rocemu_qp *qp;	/* the run holding the stage, NULL when free */
	unsigned int n;
	struct rocemu_rc_tx tx[ROCEMU_RC_STAGE_MSGS];
	struct rocemu_send_wqe wqe[ROCEMU_RC_STAGE_MSGS];
	struct staged_from from[ROCEMU_RC_STAGE_MSGS];
} stage;

bool rocemu_rc_stage_claim(const struct rocemu_qp *qp)
{
	if (stage.qp)
		return false;
	stage.qp = qp;
	stage.n = 0;
	return true;
}

void rocemu_rc_stage_release(void)
{
	stage.qp = NULL;
	stage.n = 0;
}

bool rocemu_rc_stage_add(const struct rocemu_qp *qp, const struct rocemu_rc_msg *m,
			 uint32_t offset, uint32_t max_pkts)
{
	const struct rocemu_rc_req *req = &qp->rc->req;
	unsigned int i = stage.n;

	if (stage.qp != qp || i == ROCEMU_RC_STAGE_MSGS)
		return false;
	/* The inline bytes past inline_len are never read. */
	memcpy(&stage.wqe[i], m->wqe, offsetof(struct rocemu_send_wqe, inline_data) +
	       m->wqe->inline_len);
	stage.tx[i] = (struct rocemu_rc_tx){ .m = *m, .offset = offset, .max_pkts = max_pkts };
	stage.tx[i].m.wqe = &stage.wqe[i];
	stage.from[i] = (struct staged_from){ .pos = req->cursor, .cursor_psn = req->cursor_psn,
					      .sent_psn = req->sent_psn };
	stage.n++;
	return true;
}

int rocemu_rc_stage_flush(struct rocemu_qp *qp)
{
	struct rocemu_rc_req *req = &qp->rc->req;
	unsigned int n = stage.n, failed;
	int err;

	if (stage.qp != qp || !n)
		return 0;
	err = rocemu_rc_send_msgs(qp, stage.tx, n, &failed);
	stage.n = 0;
	if (err) {
		req->cursor = stage.from[failed].pos;
		req->cursor_psn = stage.from[failed].cursor_psn;
		req->sent_psn = stage.from[failed].sent_psn;
	}
	return err;
}
