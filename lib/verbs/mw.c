/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Memory windows: ibv_alloc_mw / ibv_dealloc_mw through the control
 * connection, and ibv_bind_mw (type 1) as mlx5 does it: a BIND_MW work
 * request in the QP's send queue with the next rkey variant, which the
 * window takes once the post succeeded.
 */
#include "lib/shim.h"

#include <errno.h>
#include <stdlib.h>

struct ibv_mw *rocemu_alloc_mw_op(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct rocemu_alloc_mw_req req = { .pdn = to_rpd(pd)->pdn, .type = type };
	struct rocemu_alloc_mw_resp resp;
	struct ibv_mw *mw;
	int err;

	mw = calloc(1, sizeof(*mw));
	if (!mw) {
		errno = ENOMEM;
		return NULL;
	}
	err = rocemu_conn_call(&to_rctx(pd->context)->conn, ROCEMU_OP_ALLOC_MW, &req, &resp,
			       NULL, 0);
	if (err) {
		free(mw);
		errno = -err;
		return NULL;
	}
	mw->context = pd->context;
	mw->pd = pd;
	mw->rkey = resp.rkey;
	mw->handle = resp.handle;
	mw->type = type;
	return mw;
}

int rocemu_dealloc_mw_op(struct ibv_mw *mw)
{
	struct rocemu_handle_req req = { .handle = mw->handle };
	int err = rocemu_conn_call(&to_rctx(mw->context)->conn, ROCEMU_OP_DEALLOC_MW, &req,
				   NULL, NULL, 0);

	if (err)
		return rocemu_errno_value(err);
	free(mw);
	return 0;
}

int rocemu_bind_mw_op(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind)
{
	struct ibv_send_wr wr = {
		.wr_id = mw_bind->wr_id,
		.send_flags = mw_bind->send_flags,
		.opcode = IBV_WR_BIND_MW,
		.bind_mw = { .mw = mw, .rkey = ibv_inc_rkey(mw->rkey),
			     .bind_info = mw_bind->bind_info },
	}, *bad;
	int err = rocemu_post_send_op(qp, &wr, &bad);

	if (!err)
		mw->rkey = wr.bind_mw.rkey;
	return err;
}
