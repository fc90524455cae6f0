/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Shared receive queues (mlx5 format, ring.h): made, armed, queried and
 * destroyed here; responders take their WQEs through recv_wqe.h.
 * Functions return 0 or -errno.
 */
#ifndef ROCEMU_EMULATOR_SRQ_H
#define ROCEMU_EMULATOR_SRQ_H

#include <stdbool.h>
#include <stdint.h>

#include "emulator/core/client.h"
#include "emulator/core/object.h"
#include "emulator/obj/xrcd.h"

struct rocemu_qp;

struct rocemu_srq {
	struct rocemu_client *owner;
	struct rocemu_list node;	/* in owner->srqs */
	uint32_t srqn;
	struct rocemu_charge charge;	/* limits.h */
	struct rocemu_pd *pd;
	struct rocemu_xrcd_open *xrcd_open;	/* XRC: the open it was made on, else NULL */
	struct rocemu_cq *cq;		/* XRC: where its receives complete, else NULL */
	uint64_t user_srq;		/* reported in async events */
	uint32_t max_wr, max_sge;	/* granted */
	uint32_t limit;			/* armed limit (0: disarmed) */
	uint32_t users;			/* QPs taking from it */
	uint32_t consumed;		/* WQEs taken (free-running; the doorbell counts posts) */
	uint16_t next;			/* index of the next WQE along the links */
	bool broken;			/* its doorbell went past the ring: SRQ_ERR raised, no more taken */
	struct rocemu_srq_layout layout;
	struct rocemu_shm ring;
};

/*
 * Create an SRQ on PD req->pdn (XRC: also in an XRC domain, completing to
 * a CQ): -EINVAL for a PD, domain or CQ c does not own, or sizes over
 * max_srq_wr/max_srq_sge, -ENOMEM at max_srq. On success *fd is the memfd
 * (to be sent and closed).
 */
int rocemu_srq_create(struct rocemu_client *c, const struct rocemu_create_srq_req *req,
		      struct rocemu_create_srq_resp *resp, int *fd);
/* Arm the limit (IBV_SRQ_LIMIT); resizing (IBV_SRQ_MAX_WR) is -EINVAL, as on mlx5. */
int rocemu_srq_modify(struct rocemu_client *c, const struct rocemu_modify_srq_req *req);
int rocemu_srq_query(struct rocemu_client *c, uint32_t srqn, struct rocemu_query_srq_resp *resp);
/* -EBUSY while a QP uses it. */
int rocemu_srq_destroy(struct rocemu_client *c, uint32_t srqn);
struct rocemu_srq *rocemu_srq_lookup(struct rocemu_client *c, uint32_t srqn);
/* SRQs as objects of their context (object.h), freed when it closes. */
extern const struct rocemu_obj_kind rocemu_srq_kind;

/* qp, which has an SRQ, entered ERR: IBV_EVENT_QP_LAST_WQE_REACHED (IBTA 10.3.1). */
void rocemu_srq_qp_errored(struct rocemu_qp *qp);

#endif /* ROCEMU_EMULATOR_SRQ_H */
