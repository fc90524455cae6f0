/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * ibv_attach_mcast / ibv_detach_mcast on emulated UD QPs: the daemon
 * joins the group's IPv4 address on the device and fans its datagrams out
 * to the QPs attached. The LID means nothing on a RoCE port and is ignored.
 */
#include <string.h>

#include "lib/shim.h"

static int mcast_call(struct ibv_qp *qp, uint16_t op, const union ibv_gid *gid)
{
	struct rocemu_mcast_req req = { .qpn = qp->qp_num };

	memcpy(req.mgid, gid->raw, sizeof(req.mgid));
	return rocemu_errno_value(rocemu_conn_call(&to_rctx(qp->context)->conn, op, &req, NULL,
						   NULL, 0));
}

int ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	if (!rocemu_ctx_is_ours(qp->context))
		return REAL(ibv_attach_mcast)(qp, gid, lid);
	return mcast_call(qp, ROCEMU_OP_ATTACH_MCAST, gid);
}

int ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	if (!rocemu_ctx_is_ours(qp->context))
		return REAL(ibv_detach_mcast)(qp, gid, lid);
	return mcast_call(qp, ROCEMU_OP_DETACH_MCAST, gid);
}
