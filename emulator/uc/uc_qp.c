/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * UC's transport ops: RC's life of a QP (rc_qp.c) with UC's own requester
 * and responder. UC has no acknowledges, so every packet it takes is a
 * request, and its only timers are a refused CQE and the next burst.
 */
#include "emulator/obj/qp.h"
#include "emulator/rc/rc.h"
#include "emulator/uc/uc.h"

/* The next burst is UC's own; a refused CQE fails the QP as on RC. */
static void uc_timer(struct rocemu_qp *qp, enum rocemu_qp_timer_kind kind)
{
	if (kind == ROCEMU_QP_TIMER_TX)
		rocemu_uc_req_run(qp);
	else
		rocemu_rc_timer(qp, kind);
}

const struct rocemu_transport_ops rocemu_uc_transport = {
	.name = "UC",
	.connected = true,
	.init = rocemu_rc_init,
	.destroy = rocemu_rc_destroy,
	.modified = rocemu_rc_modified,
	.post = rocemu_uc_req_run,
	.flush = rocemu_rc_flush,
	.rx = rocemu_uc_resp_packet,
	.timer = uc_timer,
	.sq_draining = rocemu_rc_sq_draining,
};
