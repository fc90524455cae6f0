/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * XRC domains, as mlx5_open_xrcd / ibv_cmd_open_xrcd: the daemon finds
 * the domain of a file by its inode, as the kernel's uverbs does, so
 * processes that open one file share one domain.
 */
#include "lib/shim.h"

#include <stdlib.h>

#include "rocemu/log.h"

struct ibv_xrcd *rocemu_open_xrcd_op(struct ibv_context *context,
				     struct ibv_xrcd_init_attr *attr)
{
	struct rocemu_context *rctx = to_rctx(context);
	struct rocemu_open_xrcd_req req = { .oflags = (uint32_t)attr->oflags };
	struct rocemu_open_xrcd_resp resp;
	struct rocemu_xrcd *xrcd;
	int err;

	/* ibv_cmd_open_xrcd: unknown bits, then both of fd and oflags required. */
	if (attr->comp_mask >= IBV_XRCD_INIT_ATTR_RESERVED) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!(attr->comp_mask & IBV_XRCD_INIT_ATTR_FD) ||
	    !(attr->comp_mask & IBV_XRCD_INIT_ATTR_OFLAGS)) {
		errno = EINVAL;
		return NULL;
	}
	req.shared = attr->fd != -1;
	xrcd = calloc(1, sizeof(*xrcd));
	if (!xrcd) {
		errno = ENOMEM;
		return NULL;
	}
	/* The fd itself goes along (a bad one is EBADF, as fdget in the kernel). */
	err = rocemu_conn_call_fd(&rctx->conn, ROCEMU_OP_OPEN_XRCD, &req, &resp, attr->fd);
	if (err) {
		free(xrcd);
		errno = -err;
		return NULL;
	}
	xrcd->ibxrcd.context = context;
	xrcd->handle = resp.handle;
	xrcd->xrcdn = resp.xrcdn;
	rocemu_log(ROCEMU_LOG_DEBUG, "%s xrcd %u opened (handle %u)", rctx->info.name, resp.xrcdn,
		   resp.handle);
	return &xrcd->ibxrcd;
}

int rocemu_close_xrcd_op(struct ibv_xrcd *ibxrcd)
{
	struct rocemu_xrcd *xrcd = to_rxrcd(ibxrcd);
	struct rocemu_handle_req req = { .handle = xrcd->handle };
	int err;

	err = rocemu_conn_call(&to_rctx(ibxrcd->context)->conn, ROCEMU_OP_CLOSE_XRCD, &req, NULL,
			       NULL, 0);
	if (err)
		return rocemu_errno_value(err);
	free(xrcd);
	return 0;
}
