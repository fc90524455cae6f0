/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The data path as it stands: the rings are created and mapped, but no
 * WQE is written and no CQE read yet. Posting fails with EOPNOTSUPP at
 * the first work request; polling finds the CQ empty.
 */
#include "shim.h"

int rocemu_poll_cq_op(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc)
{
	return 0;
}

int rocemu_post_send_op(struct ibv_qp *qp, struct ibv_send_wr *wr,
			struct ibv_send_wr **bad_wr)
{
	*bad_wr = wr;
	return EOPNOTSUPP;
}

int rocemu_post_recv_op(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad_wr)
{
	*bad_wr = wr;
	return EOPNOTSUPP;
}

/* ENOENT: no completion to report. */
static int cq_ex_start_poll(struct ibv_cq_ex *cq, struct ibv_poll_cq_attr *attr)
{
	return ENOENT;
}

static int cq_ex_next_poll(struct ibv_cq_ex *cq)
{
	return ENOENT;
}

static void cq_ex_end_poll(struct ibv_cq_ex *cq)
{
}

void rocemu_cq_ex_set_poll_ops(struct ibv_cq_ex *cq)
{
	cq->start_poll = cq_ex_start_poll;
	cq->next_poll = cq_ex_next_poll;
	cq->end_poll = cq_ex_end_poll;
}
