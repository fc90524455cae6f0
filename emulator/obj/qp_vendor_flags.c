/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/obj/qp_vendor_flags.h"

#include <errno.h>
#include <infiniband/mlx5dv.h>

#include "emulator/obj/cq.h"
#include "emulator/obj/qp.h"

int rocemu_qp_vendor_check(const struct rocemu_create_qp_req *req)
{
	if (req->vendor_flags & ~(uint32_t)(ROCEMU_QP_VENDOR_SCATTER_CQE |
					    ROCEMU_QP_VENDOR_ALLOW_SCATTER_CQE |
					    ROCEMU_QP_VENDOR_PACKET_BASED_CREDIT))
		return -EINVAL;
	/*
	 * qp_packet_based, a ConnectX-5's: RC only, the others keep the flag and
	 * fail. Taken, it changes nothing here: responders advertise no
	 * end-to-end credits (AETH credit count 0x1f), so no unit limits a requester.
	 */
	if ((req->vendor_flags & ROCEMU_QP_VENDOR_PACKET_BASED_CREDIT) && req->qp_type != IBV_QPT_RC)
		return -EINVAL;
	return 0;
}

/* Half of a CQE of cq: what it may carry. */
static uint8_t cq_scatter_bytes(const struct rocemu_cq *cq)
{
	return (uint8_t)(cq->layout.cqe_size / 2);
}

void rocemu_qp_vendor_setup(struct rocemu_qp *qp, uint32_t vendor_flags)
{
	bool scatter = vendor_flags & ROCEMU_QP_VENDOR_SCATTER_CQE;

	/* create_user_qp: cs_res for RC and UC, by the receive CQ's CQE size. */
	qp->cqe_scatter_res = scatter && (qp->type == IBV_QPT_RC || qp->type == IBV_QPT_UC) ?
			      cq_scatter_bytes(qp->recv_cq) : 0;
	/*
	 * configure_requester_scat_cqe: cs_req for RC when every WQE is
	 * signaled or the program allows it (it then signals its READs and atomics).
	 */
	qp->cqe_scatter_req = scatter && qp->type == IBV_QPT_RC &&
			      ((vendor_flags & ROCEMU_QP_VENDOR_ALLOW_SCATTER_CQE) || qp->sq_sig_all) ?
			      cq_scatter_bytes(qp->send_cq) : 0;
}
