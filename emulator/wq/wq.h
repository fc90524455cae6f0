/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Receive work queues (ibv_create_wq, IBV_WQT_RQ): an RQ of its own in
 * mlx5's RQ format (data segments, a power-of-two stride) and its
 * doorbell record in a memfd, completing to a CQ, in state RESET, RDY or
 * ERR. RSS QPs receive into them through indirection tables
 * (rwq_ind_table.h). Functions return 0 or -errno.
 */
#ifndef ROCEMU_EMULATOR_WQ_H
#define ROCEMU_EMULATOR_WQ_H

#include <infiniband/verbs.h>
#include <stdint.h>

#include "emulator/base/shm.h"
#include "emulator/core/client.h"
#include "emulator/core/object.h"
#include "emulator/ring/format.h"

struct rocemu_wq {
	struct rocemu_client *owner;
	struct rocemu_list node;	/* in owner->wqs */
	uint32_t wqn;
	struct rocemu_charge charge;	/* limits.h */
	struct rocemu_pd *pd;
	struct rocemu_cq *cq;
	uint64_t user_wq;		/* reported in async events */
	uint32_t max_wr, max_sge;	/* granted */
	uint32_t wqe_cnt, wqe_shift;	/* the ring: wqe_cnt strides of 1 << wqe_shift bytes at 0 */
	uint64_t dbrec_offset;		/* the doorbell record: the posted count, big-endian */
	enum ibv_wq_state state;
	uint32_t flags;			/* enum ibv_wq_flags */
	uint32_t tables;		/* indirection tables naming it */
	uint32_t consumed;		/* WQEs taken (free-running; the doorbell counts posts) */
	struct rocemu_shm ring;
};

/*
 * Create a WQ: -EINVAL for a type not IBV_WQT_RQ, a PD or CQ c does not
 * own, max_wr 0 or past the device's, max_sge past it; -EOPNOTSUPP for a
 * flag not supported (mlx5_ib_create_wq). On success *fd is the memfd.
 */
int rocemu_wq_create(struct rocemu_client *c, const struct rocemu_create_wq_req *req,
		     struct rocemu_create_wq_resp *resp, int *fd);
/*
 * ibv_modify_wq: the state (RESET to RDY, RDY to ERR or RESET, ERR to
 * RESET, or the same) from the current one, which a CURR_STATE given
 * must match, and the flags of flags_mask: -EINVAL otherwise. To ERR
 * flushes the WQEs posted (WR_FLUSH_ERR).
 */
int rocemu_wq_modify(struct rocemu_client *c, const struct rocemu_modify_wq_req *req);
/* -EBUSY while an indirection table names it. */
int rocemu_wq_destroy(struct rocemu_client *c, uint32_t wqn);
struct rocemu_wq *rocemu_wq_lookup(struct rocemu_client *c, uint32_t wqn);
/* The WQ's ring as the ring format reads it. */
struct rocemu_rq_ring rocemu_wq_rq_ring(const struct rocemu_wq *wq);
/*
 * A receive of WQE counter failed with status: its error CQE (the WQ's
 * number as the QPN), and unless a flush, the WQ to ERR, which flushes
 * every WQE posted with WR_FLUSH_ERR, as mlx5's RQ in error.
 */
void rocemu_wq_recv_fail(struct rocemu_wq *wq, uint32_t counter, enum ibv_wc_status status);
/* WQs as objects of their context (object.h), freed when it closes. */
extern const struct rocemu_obj_kind rocemu_wq_kind;

#endif /* ROCEMU_EMULATOR_WQ_H */
