/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * ibv_create_flow and ibv_destroy_flow: a steering rule is the daemon's
 * (it checks every spec as mlx5_ib does); the shim copies the caller's
 * ibv_flow_attr and the specs laid after it, each sized by its header,
 * and hands out the ibv_flow libibverbs would.
 */
#include "lib/shim.h"

#include <stdlib.h>
#include <string.h>

#include "rocemu/log.h"

/* The specs' bytes after attr, walked by their sizes; 0 when they pass the request's room. */
static size_t flow_specs_len(const struct ibv_flow_attr *attr)
{
	const uint8_t *spec = (const uint8_t *)(attr + 1);
	struct ibv_flow_spec hdr;	/* its header only: specs follow each other at any byte */
	size_t len = 0;
	uint8_t i;

	for (i = 0; i < attr->num_of_specs; i++) {
		memcpy(&hdr.hdr, spec + len, sizeof(hdr.hdr));
		/* uverbs: a spec of no bytes or past the command is EINVAL */
		if (hdr.hdr.size < sizeof(hdr.hdr) || hdr.hdr.size > ROCEMU_FLOW_SPECS_MAX - len)
			return 0;
		len += hdr.hdr.size;
	}
	return len;
}

struct ibv_flow *rocemu_create_flow_op(struct ibv_qp *qp, struct ibv_flow_attr *attr)
{
	struct rocemu_create_flow_req *req;
	struct rocemu_create_flow_resp resp;
	struct ibv_flow *flow;
	uint32_t qpn = to_rqp(qp)->qpn;
	size_t len = flow_specs_len(attr);
	int err;

	if (attr->comp_mask || (attr->num_of_specs && !len)) {
		errno = EINVAL;
		return NULL;
	}
	req = calloc(1, sizeof(*req));
	flow = calloc(1, sizeof(*flow));
	if (!req || !flow) {
		free(req);
		free(flow);
		return NULL;	/* calloc set ENOMEM */
	}
	req->qpn = qpn;
	req->type = attr->type;
	req->flags = attr->flags;
	req->priority = attr->priority;
	req->port = attr->port;
	req->num_of_specs = attr->num_of_specs;
	req->specs_len = (uint32_t)len;
	memcpy(req->specs, attr + 1, len);
	err = rocemu_conn_call(&to_rctx(qp->context)->conn, ROCEMU_OP_CREATE_FLOW, req, &resp,
			       NULL, 0);
	free(req);
	if (err) {
		free(flow);
		errno = -err;
		return NULL;
	}
	flow->context = qp->context;
	flow->handle = resp.handle;
	rocemu_log(ROCEMU_LOG_DEBUG, "%s qp 0x%06x flow %u created", to_rctx(qp->context)->info.name,
		   qpn, resp.handle);
	return flow;
}

int rocemu_destroy_flow_op(struct ibv_flow *flow)
{
	struct rocemu_handle_req req = { .handle = flow->handle };
	int err;

	err = rocemu_conn_call(&to_rctx(flow->context)->conn, ROCEMU_OP_DESTROY_FLOW, &req, NULL,
			       NULL, 0);
	if (err)
		return rocemu_errno_value(err);
	free(flow);
	return 0;
}
