/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Exported verbs for what an emulated device does not offer (yet):
 * ECE, dma-buf MRs. In
 * libibverbs each of them calls the provider through private state an
 * emulated context lacks, so they are answered here as rdma-core answers
 * for a provider without the op; real devices get the real library.
 */
#include "lib/shim.h"

static void *not_supported(void)
{
	errno = EOPNOTSUPP;
	return NULL;
}

int ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	return rocemu_ctx_is_ours(qp->context) ? EOPNOTSUPP : REAL(ibv_query_ece)(qp, ece);
}

int ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	return rocemu_ctx_is_ours(qp->context) ? EOPNOTSUPP : REAL(ibv_set_ece)(qp, ece);
}

/* 0: no promise that data lands in order, what libibverbs says without the op. */
int ibv_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags)
{
	return rocemu_ctx_is_ours(qp->context) ? 0 : REAL(ibv_query_qp_data_in_order)(qp, op, flags);
}

struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length, uint64_t iova,
				 int fd, int access)
{
	return rocemu_pd_is_ours(pd) ? not_supported() :
				REAL(ibv_reg_dmabuf_mr)(pd, offset, length, iova, fd, access);
}
