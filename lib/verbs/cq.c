/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Completion queues: the daemon creates the CQE ring and doorbell record
 * in a memfd that both sides map; the shim keeps the consumer index and
 * arms the CQ by writing the arm word of the doorbell record as the mlx5
 * provider does.
 */
#include "lib/shim.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "rocemu/log.h"

/* Completion-entry fields ibv_cq_ex can report on this device. */
#define CQ_SUPPORTED_WC_FLAGS                                                      \
	((uint64_t)(IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | \
		    IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK | IBV_WC_EX_WITH_CVLAN | \
		    IBV_WC_EX_WITH_FLOW_TAG))
#define CQ_SUPPORTED_COMP_MASK ((uint32_t)(IBV_CQ_INIT_ATTR_MASK_FLAGS | IBV_CQ_INIT_ATTR_MASK_PD))
#define CQ_SUPPORTED_CREATE_FLAGS ((uint32_t)IBV_CREATE_CQ_ATTR_SINGLE_THREADED)

static bool layout_fits(uint64_t offset, uint64_t len, uint64_t size)
{
	return offset <= size && len <= size - offset;
}

/* The entry sizes of a CQ of context: mlx5's 64 and 128 bytes, mlx4's 32 and 64. */
static bool cqe_size_ok(struct ibv_context *context, uint32_t size)
{
	uint32_t unit = rocemu_ctx_is_mlx4(context) ? ROCEMU_MLX4_CQE_SIZE :
						      sizeof(struct mlx5_cqe64);

	return size == unit || size == 2 * unit;
}

/* Map the ring described by layout (fd consumed) into cq. Returns 0 or errno. */
static int cq_map(struct rocemu_cq *cq, struct ibv_context *context,
		  const struct rocemu_cq_layout *layout, int fd)
{
	void *map;

	if (layout->ncqe < 2 || (layout->ncqe & (layout->ncqe - 1)) ||
	    !cqe_size_ok(context, layout->cqe_size) ||
	    !layout_fits(layout->buf_offset, (uint64_t)layout->ncqe * layout->cqe_size, layout->size) ||
	    !layout_fits(layout->dbrec_offset, 2 * sizeof(__be32), layout->size)) {
		close(fd);
		return EPROTO;
	}
	map = rocemu_map_shared(fd, layout->size);
	if (!map)
		return errno;
	cq->map = map;
	cq->map_size = layout->size;
	cq->ncqe = layout->ncqe;
	cq->cqe_size = layout->cqe_size;
	cq->buf = (char *)map + layout->buf_offset;
	cq->dbrec = (__be32 *)((char *)map + layout->dbrec_offset);
	cq->ibcq.cqe = (int)layout->ncqe - 1;
	return 0;
}

static void cq_destroy_in_daemon(struct rocemu_context *rctx, uint32_t cqn)
{
	struct rocemu_handle_req req = { .handle = cqn };

	rocemu_conn_call(&rctx->conn, ROCEMU_OP_DESTROY_CQ, &req, NULL, NULL, 0);
}

static struct rocemu_cq *cq_create(struct ibv_context *context, int cqe, void *cq_context,
				   struct ibv_comp_channel *channel, uint32_t comp_vector,
				   uint64_t wc_flags, struct ibv_pd *parent_domain, uint32_t cqe_size)
{
	struct rocemu_context *rctx = to_rctx(context);
	struct rocemu_create_cq_req req;
	struct rocemu_create_cq_resp resp;
	struct rocemu_cq *cq;
	int fd, err;

	/* A channel of another context (or a real one) cannot carry our events; a bad CQE size. */
	if ((channel && channel->context != context) ||
	    comp_vector >= (uint32_t)context->num_comp_vectors || !cqe_size) {
		errno = EINVAL;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq) {
		errno = ENOMEM;
		return NULL;
	}
	req = (struct rocemu_create_cq_req){
		.cqe = cqe < 0 ? 0 : (uint32_t)cqe,
		.channel = channel ? to_rchannel(channel)->handle : ROCEMU_NO_HANDLE,
		.comp_vector = comp_vector,
		.cqe_size = cqe_size,
		.user_cq = (uintptr_t)&cq->ibcq,
	};
	err = rocemu_conn_call(&rctx->conn, ROCEMU_OP_CREATE_CQ, &req, &resp, &fd, 1);
	if (err) {
		free(cq);
		errno = -err;
		return NULL;
	}
	err = cq_map(cq, context, &resp.layout, fd);
	if (err) {
		cq_destroy_in_daemon(rctx, resp.layout.cqn);
		free(cq);
		errno = err;
		return NULL;
	}
	err = rocemu_domain_res_take(&cq->domain_res, context, parent_domain, MLX5DV_RES_TYPE_CQ,
				     (size_t)cq->ncqe * cq->cqe_size);
	if (err) {
		munmap(cq->map, cq->map_size);
		cq_destroy_in_daemon(rctx, resp.layout.cqn);
		free(cq);
		errno = err;
		return NULL;
	}
	cq->cqn = resp.layout.cqn;
	/* The daemon's fired_sn starts at 0: the first arm must carry another sn. */
	cq->arm_sn = 1;
	cq->wc_flags = wc_flags;
	cq->ibcq.context = context;
	cq->ibcq.channel = channel;
	cq->ibcq.cq_context = cq_context;
	cq->ibcq.handle = cq->cqn;
	pthread_mutex_init(&cq->ibcq.mutex, NULL);
	pthread_cond_init(&cq->ibcq.cond, NULL);
	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	cq->mlx4 = rocemu_ctx_is_mlx4(context);
	if (!cq->mlx4)	/* a ConnectX-3 CQ is made by ibv_create_cq only */
		rocemu_cq_ex_set_poll_ops(&cq->ibcq);
	if (channel) {
		pthread_mutex_lock(&context->mutex);
		channel->refcnt++;
		pthread_mutex_unlock(&context->mutex);
	}
	rocemu_log(ROCEMU_LOG_DEBUG, "%s cq 0x%06x cqe %d", rctx->info.name, cq->cqn,
		   cq->ibcq.cqe);
	return cq;
}

/* The CQE size a CQ of context gets without mlx5dv_create_cq: libmlx4's, or libmlx5's as MLX5_CQE_SIZE says. */
static uint32_t cqe_size_default(struct ibv_context *context)
{
	return rocemu_ctx_is_mlx4(context) ? ROCEMU_MLX4_CQE_SIZE_DEFAULT : rocemu_cqe_size_env();
}

uint32_t rocemu_cqe_size_env(void)
{
	const char *env = getenv("MLX5_CQE_SIZE");
	int size = env ? atoi(env) : (int)sizeof(struct mlx5_cqe64);

	return size == sizeof(struct mlx5_cqe64) || size == 2 * sizeof(struct mlx5_cqe64) ?
		       (uint32_t)size : 0;
}

struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
			     struct ibv_comp_channel *channel, int comp_vector)
{
	struct rocemu_cq *cq;

	if (!rocemu_ctx_is_ours(context))
		return REAL(ibv_create_cq)(context, cqe, cq_context, channel, comp_vector);
	/* Negative: far above num_comp_vectors once unsigned, refused there. */
	cq = cq_create(context, cqe, cq_context, channel, (uint32_t)comp_vector,
		       IBV_WC_STANDARD_FLAGS, NULL, cqe_size_default(context));
	return cq ? ibv_cq_ex_to_cq(&cq->ibcq) : NULL;
}

struct ibv_cq_ex *rocemu_cq_create_ex(struct ibv_context *context,
				      struct ibv_cq_init_attr_ex *attr, uint32_t cqe_size)
{
	struct rocemu_cq *cq;

	/* mlx5's create_cq: no CQE, unknown comp_mask or create flags EINVAL, then wc_flags ENOTSUP. */
	if (!attr->cqe || (attr->comp_mask & ~CQ_SUPPORTED_COMP_MASK) ||
	    ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	     (attr->flags & ~CQ_SUPPORTED_CREATE_FLAGS))) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->wc_flags & ~CQ_SUPPORTED_WC_FLAGS) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* mlx5_create_cq: the PD given must be a parent domain (of this context). */
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) &&
	    (!attr->parent_domain || attr->parent_domain->context != context ||
	     !to_rparent_domain(attr->parent_domain))) {
		errno = EINVAL;
		return NULL;
	}
	cq = cq_create(context, (int)attr->cqe, attr->cq_context, attr->channel,
		       attr->comp_vector, attr->wc_flags,
		       (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) ? attr->parent_domain : NULL,
		       cqe_size);
	return cq ? &cq->ibcq : NULL;
}

struct ibv_cq_ex *rocemu_create_cq_ex_op(struct ibv_context *context,
					 struct ibv_cq_init_attr_ex *attr)
{
	/* The extended CQ's readers parse mlx5 CQEs: as a provider without create_cq_ex */
	if (rocemu_ctx_is_mlx4(context)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	return rocemu_cq_create_ex(context, attr, rocemu_cqe_size_env());
}

int ibv_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct rocemu_cq *cq, resized;
	struct rocemu_resize_cq_req req;
	struct rocemu_resize_cq_resp resp;
	int fd, err;

	if (!rocemu_ctx_is_ours(ibcq->context))
		return REAL(ibv_resize_cq)(ibcq, cqe);
	cq = to_rcq(ibcq);
	req = (struct rocemu_resize_cq_req){ .cqn = cq->cqn, .cqe = cqe < 0 ? 0 : (uint32_t)cqe };
	/* No poll may move the consumer index while the daemon copies from it (as mlx5). */
	pthread_spin_lock(&cq->lock);
	err = rocemu_conn_call(&to_rctx(ibcq->context)->conn, ROCEMU_OP_RESIZE_CQ, &req, &resp,
			       &fd, 1);
	if (err) {
		pthread_spin_unlock(&cq->lock);
		return rocemu_errno_value(err);
	}
	memset(&resized, 0, sizeof(resized));
	err = cq_map(&resized, ibcq->context, &resp.layout, fd);
	if (err) {
		pthread_spin_unlock(&cq->lock);
		return err;
	}
	munmap(cq->map, cq->map_size);
	cq->map = resized.map;
	cq->map_size = resized.map_size;
	cq->ncqe = resized.ncqe;
	cq->cqe_size = resized.cqe_size;
	cq->buf = resized.buf;
	cq->dbrec = resized.dbrec;
	ibcq->cqe = resized.ibcq.cqe;
	/* The daemon moved the unpolled CQEs and says where polling resumes. */
	cq->cons_index = be32toh(cq->dbrec[ROCEMU_CQ_DBR_SET_CI]) & ROCEMU_CQ_INDEX_MASK;
	pthread_spin_unlock(&cq->lock);
	return 0;
}

int ibv_destroy_cq(struct ibv_cq *ibcq)
{
	struct ibv_comp_channel *channel = ibcq->channel;
	struct ibv_context *context = ibcq->context;
	struct rocemu_handle_req req;
	struct rocemu_cq *cq;
	int err;

	if (!rocemu_ctx_is_ours(context))
		return REAL(ibv_destroy_cq)(ibcq);
	cq = to_rcq(ibcq);
	req = (struct rocemu_handle_req){ .handle = cq->cqn };
	err = rocemu_conn_call(&to_rctx(context)->conn, ROCEMU_OP_DESTROY_CQ, &req, NULL,
			       NULL, 0);
	if (err)
		return rocemu_errno_value(err);
	if (channel) {
		pthread_mutex_lock(&context->mutex);
		channel->refcnt--;
		pthread_mutex_unlock(&context->mutex);
	}
	munmap(cq->map, cq->map_size);
	rocemu_domain_res_give(&cq->domain_res);
	pthread_spin_destroy(&cq->lock);
	pthread_cond_destroy(&ibcq->cond);
	pthread_mutex_destroy(&ibcq->mutex);
	free(cq);
	return 0;
}

int rocemu_req_notify_cq_op(struct ibv_cq *ibcq, int solicited_only)
{
	struct rocemu_cq *cq = to_rcq(ibcq);
	uint32_t arm = rocemu_cq_arm_word(__atomic_load_n(&cq->arm_sn, __ATOMIC_RELAXED),
					  solicited_only, cq->cons_index);

	/* Release: the daemon that sees the arm also sees the consumer index. */
	__atomic_store_n(&cq->dbrec[ROCEMU_CQ_DBR_ARM], htobe32(arm), __ATOMIC_RELEASE);
	rocemu_ctx_doorbell(to_rctx(ibcq->context));
	return 0;
}

static bool mlx5_ready(struct rocemu_cq *cq, uint32_t i)
{
	return rocemu_cqe_sw(cq, i) != NULL;
}

static bool mlx5_drop(struct rocemu_cq *cq, uint32_t i, uint32_t num, bool wq,
		      struct rocemu_srq *srq)
{
	struct mlx5_cqe64 *cqe = rocemu_cqe_at(cq->buf, cq->cqe_size, cq->ncqe, i);

	if (rocemu_cqe_is_wq(cqe) != wq || rocemu_cqe_qpn(cqe) != num)
		return false;
	if (srq && (rocemu_cqe_op(cqe->op_own >> 4)->flags & ROCEMU_CQE_OP_RQ))
		rocemu_srq_complete(srq, be16toh(cqe->wqe_counter));
	return true;
}

static void mlx5_move(struct rocemu_cq *cq, uint32_t from, uint32_t to)
{
	struct mlx5_cqe64 *cqe = rocemu_cqe_at(cq->buf, cq->cqe_size, cq->ncqe, from);
	struct mlx5_cqe64 *dest = rocemu_cqe_at(cq->buf, cq->cqe_size, cq->ncqe, to);
	uint8_t owner = dest->op_own & MLX5_CQE_OWNER_MASK;

	/* The whole entry, as mlx5: a 128-byte CQE's first half may hold its data. */
	memcpy((char *)dest + sizeof(*dest) - cq->cqe_size,
	       (char *)cqe + sizeof(*cqe) - cq->cqe_size, cq->cqe_size);
	dest->op_own = (uint8_t)(owner | (cqe->op_own & ~MLX5_CQE_OWNER_MASK));
}

static const struct rocemu_cqe_sweep_ops mlx5_sweep_ops = { mlx5_ready, mlx5_drop, mlx5_move };

/*
 * As mlx5's __mlx5_cq_clean and mlx4's __mlx4_cq_clean: sweep the unpolled
 * CQEs from the newest back, dropping those of the QP (or with wq, the WQ)
 * num and moving the older ones up over them; then the consumer index
 * skips the slots freed. New CQEs the daemon writes meanwhile are of
 * others (num is in RESET or gone) and lie past the end found first. A
 * receive CQE dropped gives its WQE back to srq, when the QP has one.
 */
static void cq_sweep(struct rocemu_cq *cq, uint32_t num, bool wq, struct rocemu_srq *srq)
{
	const struct rocemu_cqe_sweep_ops *ops = cq->mlx4 ? &rocemu_mlx4_cqe_sweep_ops :
							    &mlx5_sweep_ops;
	uint32_t prod, nfreed = 0;

	if (__atomic_load_n(&cq->dv_owned, __ATOMIC_ACQUIRE))
		return;
	pthread_spin_lock(&cq->lock);
	for (prod = cq->cons_index; prod - cq->cons_index < cq->ncqe && ops->ready(cq, prod);
	     prod++)
		;
	while (prod-- != cq->cons_index) {
		if (ops->drop(cq, prod, num, wq, srq))
			nfreed++;
		else if (nfreed)
			ops->move(cq, prod, prod + nfreed);
	}
	if (nfreed) {
		cq->cons_index += nfreed;
		rocemu_cq_update_ci(cq);
		rocemu_log(ROCEMU_LOG_DEBUG, "cq 0x%06x: %u CQEs of %s 0x%06x cleaned", cq->cqn,
			   nfreed, wq ? "wq" : "qp", num);
	}
	pthread_spin_unlock(&cq->lock);
}

void rocemu_cq_clean(struct rocemu_cq *cq, uint32_t qpn, struct rocemu_srq *srq)
{
	cq_sweep(cq, qpn, false, srq);
}

void rocemu_cq_clean_wq(struct rocemu_cq *cq, uint32_t wqn)
{
	cq_sweep(cq, wqn, true, NULL);
}
