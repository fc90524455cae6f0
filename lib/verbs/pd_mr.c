/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Protection domains and memory regions. The daemon checks access flags
 * and that the range is mapped (and writable when asked; an ODP MR's need
 * not be); the shim does only the checks libibverbs itself does before
 * calling a provider. A parent domain is deallocated in domain.c.
 */
#include "lib/shim.h"

#include <stdlib.h>

#include "rocemu/log.h"

/* The PD the daemon answers op (ALLOC_PD, IMPORT_PD) with; NULL and errno on failure. */
static struct ibv_pd *pd_new(struct ibv_context *context, enum rocemu_ctrl_op op, const void *req)
{
	struct rocemu_alloc_pd_resp resp;
	struct rocemu_pd *pd;
	int err;

	pd = calloc(1, sizeof(*pd));
	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	err = rocemu_conn_call(&to_rctx(context)->conn, op, req, &resp, NULL, 0);
	if (err) {
		free(pd);
		errno = -err;
		return NULL;
	}
	pd->pdn = resp.pdn;
	pd->ibpd.context = context;
	pd->ibpd.handle = resp.pdn;
	rocemu_log(ROCEMU_LOG_DEBUG, "%s pd %u %s", to_rctx(context)->info.name, pd->pdn,
		   op == ROCEMU_OP_ALLOC_PD ? "allocated" : "imported");
	return &pd->ibpd;
}

struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
	if (!rocemu_ctx_is_ours(context))
		return REAL(ibv_alloc_pd)(context);
	return pd_new(context, ROCEMU_OP_ALLOC_PD, NULL);
}

int ibv_dealloc_pd(struct ibv_pd *pd)
{
	struct rocemu_handle_req req;
	int err;

	if (!rocemu_pd_is_ours(pd))
		return REAL(ibv_dealloc_pd)(pd);
	if (to_rparent_domain(pd))
		return rocemu_parent_domain_dealloc(to_rparent_domain(pd));
	/* mlx5_free_pd: a PD with parent domains on it stays. */
	if (__atomic_load_n(&to_rpd(pd)->holders, __ATOMIC_RELAXED))
		return EBUSY;
	req = (struct rocemu_handle_req){ .handle = to_rpd(pd)->pdn };
	err = rocemu_conn_call(&to_rctx(pd->context)->conn, ROCEMU_OP_DEALLOC_PD, &req,
			       NULL, NULL, 0);
	if (err)
		return rocemu_errno_value(err);
	free(to_rpd(pd));
	return 0;
}

struct ibv_pd *ibv_import_pd(struct ibv_context *context, uint32_t pd_handle)
{
	struct rocemu_handle_req req = { .handle = pd_handle };

	if (!rocemu_ctx_is_ours(context))
		return REAL(ibv_import_pd)(context, pd_handle);
	return pd_new(context, ROCEMU_OP_IMPORT_PD, &req);
}

/*
 * The local object only: the PD stays in the daemon for its other users.
 * As mlx5_unimport_pd (built without asserts), a parent domain or a PD
 * parent domains hold is left as it is.
 */
void ibv_unimport_pd(struct ibv_pd *pd)
{
	if (!rocemu_pd_is_ours(pd)) {
		REAL(ibv_unimport_pd)(pd);
		return;
	}
	if (to_rparent_domain(pd) || __atomic_load_n(&to_rpd(pd)->holders, __ATOMIC_RELAXED))
		return;
	free(to_rpd(pd));
}

struct ibv_mr *rocemu_mr_new(struct ibv_pd *pd, enum rocemu_ctrl_op op, const void *req, void *addr)
{
	struct rocemu_reg_mr_resp resp;
	struct rocemu_mr *mr;
	int err;

	mr = calloc(1, sizeof(*mr));
	if (!mr) {
		errno = ENOMEM;
		return NULL;
	}
	err = rocemu_conn_call(&to_rctx(pd->context)->conn, op, req, &resp, NULL, 0);
	if (err) {
		free(mr);
		errno = -err;
		return NULL;
	}
	mr->ibmr.context = pd->context;
	mr->ibmr.pd = pd;
	mr->ibmr.addr = addr;
	mr->ibmr.length = resp.length;
	mr->ibmr.handle = resp.handle;
	mr->ibmr.lkey = resp.lkey;
	mr->ibmr.rkey = resp.rkey;
	rocemu_log(ROCEMU_LOG_DEBUG, "%s mr %u lkey 0x%x len %llu", to_rctx(pd->context)->info.name,
		   resp.handle, resp.lkey, (unsigned long long)resp.length);
	return &mr->ibmr;
}

static struct ibv_mr *mr_register(struct ibv_pd *pd, void *addr, size_t length,
				  uint64_t iova, unsigned int access)
{
	struct rocemu_reg_mr_req req = {
		.pdn = to_rpd(pd)->pdn,
		/* No optional access bit is supported: libibverbs drops them then. */
		.access = access & ~(unsigned int)IBV_ACCESS_OPTIONAL_RANGE,
		.addr = (uintptr_t)addr,
		.length = length,
		.iova = iova,
	};

	return rocemu_mr_new(pd, ROCEMU_OP_REG_MR, &req, addr);
}

struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	if (!rocemu_pd_is_ours(pd))
		return REAL(ibv_reg_mr)(pd, addr, length, access);
	return mr_register(pd, addr, length, (uintptr_t)addr, (unsigned int)access);
}

struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length,
			       uint64_t iova, int access)
{
	if (!rocemu_pd_is_ours(pd))
		return REAL(ibv_reg_mr_iova)(pd, addr, length, iova, access);
	return mr_register(pd, addr, length, iova, (unsigned int)access);
}

struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length,
				uint64_t iova, unsigned int access)
{
	if (!rocemu_pd_is_ours(pd))
		return REAL(ibv_reg_mr_iova2)(pd, addr, length, iova, access);
	return mr_register(pd, addr, length, iova, access);
}

/* libibverbs' own input checks, answered with IBV_REREG_MR_ERR_INPUT. */
static bool rereg_input_ok(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr,
			   size_t length, int access)
{
	/* Only an MR registered here is re-registered (mr_type IBV_MR_TYPE_MR), not an imported one. */
	if (to_rmr(mr)->imported)
		return false;
	if (flags & ~IBV_REREG_MR_FLAGS_SUPPORTED)
		return false;
	if ((flags & IBV_REREG_MR_CHANGE_TRANSLATION) && (!length || !addr))
		return false;
	if (access && !(flags & IBV_REREG_MR_CHANGE_ACCESS))
		return false;
	/* A new PD must belong to the MR's context. */
	return !(flags & IBV_REREG_MR_CHANGE_PD) || (pd && pd->context == mr->context);
}

int ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr,
		 size_t length, int access)
{
	struct rocemu_rereg_mr_req req;
	struct rocemu_reg_mr_resp resp;
	int err;

	if (!rocemu_ctx_is_ours(mr->context))
		return REAL(ibv_rereg_mr)(mr, flags, pd, addr, length, access);
	if (!rereg_input_ok(mr, flags, pd, addr, length, access)) {
		errno = EINVAL;
		return IBV_REREG_MR_ERR_INPUT;
	}
	req = (struct rocemu_rereg_mr_req){
		.handle = mr->handle,
		.flags = (uint32_t)flags,
		.pdn = (flags & IBV_REREG_MR_CHANGE_PD) ? to_rpd(pd)->pdn : to_rpd(mr->pd)->pdn,
		.access = (uint32_t)access & ~(uint32_t)IBV_ACCESS_OPTIONAL_RANGE,
		.addr = (uintptr_t)addr,
		.length = length,
		.iova = (uintptr_t)addr,
	};
	err = rocemu_conn_call(&to_rctx(mr->context)->conn, ROCEMU_OP_REREG_MR, &req, &resp,
			       NULL, 0);
	if (err) {
		errno = -err;
		return IBV_REREG_MR_ERR_CMD;
	}
	if (flags & IBV_REREG_MR_CHANGE_PD)
		mr->pd = pd;
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		mr->addr = addr;
		mr->length = length;
	}
	mr->lkey = resp.lkey;
	mr->rkey = resp.rkey;
	return 0;
}

int ibv_dereg_mr(struct ibv_mr *mr)
{
	struct rocemu_handle_req req;
	int err;

	if (!rocemu_ctx_is_ours(mr->context))
		return REAL(ibv_dereg_mr)(mr);
	req = (struct rocemu_handle_req){ .handle = mr->handle };
	err = rocemu_conn_call(&to_rctx(mr->context)->conn, ROCEMU_OP_DEREG_MR, &req, NULL,
			       NULL, 0);
	if (err)
		return rocemu_errno_value(err);
	free(to_rmr(mr));
	return 0;
}

/* As ibv_cmd_query_mr: keys and length; addr is NULL, as the man page says. */
struct ibv_mr *ibv_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	struct rocemu_handle_req req = { .handle = mr_handle };
	struct ibv_mr *mr;

	if (!rocemu_pd_is_ours(pd))
		return REAL(ibv_import_mr)(pd, mr_handle);
	mr = rocemu_mr_new(pd, ROCEMU_OP_IMPORT_MR, &req, NULL);
	if (mr)
		to_rmr(mr)->imported = true;
	return mr;
}

void ibv_unimport_mr(struct ibv_mr *mr)
{
	if (!rocemu_ctx_is_ours(mr->context)) {
		REAL(ibv_unimport_mr)(mr);
		return;
	}
	free(to_rmr(mr));
}
