/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The context's QPs by qpn, for the poller that meets a qpn in a CQE (as
 * mlx5's qp_table): a two-level table, chunks allocated on first use.
 * Writers hold the context mutex; the poller reads without it, and QP
 * removal holds the QP's CQ locks so that no poller still uses the QP.
 */
#include "lib/shim.h"

#include <stdlib.h>

#define SLOTS (1u << ROCEMU_QP_TABLE_SHIFT)

int rocemu_qp_table_insert(struct rocemu_context *rctx, struct rocemu_qp *qp)
{
	struct ibv_context *ctx = &rctx->vctx.context;
	uint32_t chunk = (qp->qpn >> ROCEMU_QP_TABLE_SHIFT) % ROCEMU_QP_TABLE_CHUNKS;
	struct rocemu_qp **slots;

	pthread_mutex_lock(&ctx->mutex);
	slots = rctx->qp_table[chunk];
	if (!slots) {
		slots = calloc(SLOTS, sizeof(*slots));
		if (!slots) {
			pthread_mutex_unlock(&ctx->mutex);
			return ENOMEM;
		}
		/* Release: a poller that finds the chunk finds it zeroed. */
		__atomic_store_n(&rctx->qp_table[chunk], slots, __ATOMIC_RELEASE);
	}
	/* Release: a poller that finds the QP finds it initialised. */
	__atomic_store_n(&slots[qp->qpn & (SLOTS - 1)], qp, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&ctx->mutex);
	return 0;
}

static void cq_lock_pair(struct rocemu_cq *a, struct rocemu_cq *b)
{
	/* One order for every pair, so two destroys cannot deadlock. */
	if (a > b) {
		struct rocemu_cq *t = a;

		a = b;
		b = t;
	}
	pthread_spin_lock(&a->lock);
	if (b != a)
		pthread_spin_lock(&b->lock);
}

static void cq_unlock_pair(struct rocemu_cq *a, struct rocemu_cq *b)
{
	if (b != a)
		pthread_spin_unlock(&b->lock);
	pthread_spin_unlock(&a->lock);
}

void rocemu_qp_table_remove(struct rocemu_context *rctx, struct rocemu_qp *qp)
{
	struct ibv_context *ctx = &rctx->vctx.context;
	struct rocemu_cq *send_cq = to_rcq(qp->qpx.qp_base.send_cq);
	/* An XRC initiator has no receive CQ. */
	struct rocemu_cq *recv_cq = qp->qpx.qp_base.recv_cq ? to_rcq(qp->qpx.qp_base.recv_cq)
							    : send_cq;
	struct rocemu_qp **slots;

	pthread_mutex_lock(&ctx->mutex);
	cq_lock_pair(send_cq, recv_cq);
	slots = rctx->qp_table[(qp->qpn >> ROCEMU_QP_TABLE_SHIFT) % ROCEMU_QP_TABLE_CHUNKS];
	if (slots && slots[qp->qpn & (SLOTS - 1)] == qp)
		__atomic_store_n(&slots[qp->qpn & (SLOTS - 1)], NULL, __ATOMIC_RELAXED);
	cq_unlock_pair(send_cq, recv_cq);
	pthread_mutex_unlock(&ctx->mutex);
}

struct rocemu_qp *rocemu_qp_table_find(struct rocemu_context *rctx, uint32_t qpn)
{
	struct rocemu_qp **slots;

	/* Acquire: pairs with the release stores of rocemu_qp_table_insert. */
	slots = __atomic_load_n(&rctx->qp_table[(qpn >> ROCEMU_QP_TABLE_SHIFT) %
						ROCEMU_QP_TABLE_CHUNKS], __ATOMIC_ACQUIRE);
	return slots ? __atomic_load_n(&slots[qpn & (SLOTS - 1)], __ATOMIC_ACQUIRE) : NULL;
}

struct rocemu_qp *rocemu_qp_table_first(struct rocemu_context *rctx,
					bool (*match)(struct rocemu_qp *qp, void *arg), void *arg)
{
	struct rocemu_qp **slots, *qp;
	unsigned int i, j;

	for (i = 0; i < ROCEMU_QP_TABLE_CHUNKS; i++) {
		slots = __atomic_load_n(&rctx->qp_table[i], __ATOMIC_ACQUIRE);
		for (j = 0; slots && j < SLOTS; j++) {
			qp = __atomic_load_n(&slots[j], __ATOMIC_ACQUIRE);
			if (qp && match(qp, arg))
				return qp;
		}
	}
	return NULL;
}

void rocemu_qp_table_free(struct rocemu_context *rctx)
{
	unsigned int i;

	for (i = 0; i < ROCEMU_QP_TABLE_CHUNKS; i++)
		free(rctx->qp_table[i]);
}
