/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Completion queues in the device's ring format (mlx5: ncqe struct mlx5_cqe64 and
 * a doorbell record (set_ci, arm; big-endian) in a memfd both sides map.
 */
#ifndef ROCEMU_EMULATOR_CQ_H
#define ROCEMU_EMULATOR_CQ_H

#include <stdint.h>

#include "emulator/core/client.h"
#include "emulator/core/object.h"

struct rocemu_cq {
	struct rocemu_client *owner;
	struct rocemu_list node;	/* in owner->cqs */
	uint32_t cqn;
	struct rocemu_channel *channel;	/* NULL when none */
	uint32_t comp_vector;
	uint64_t user_cq;		/* written to the channel per event */
	struct rocemu_cq_layout layout;
	struct rocemu_shm ring;
	uint32_t users;			/* QPs completing to it */
	uint32_t pi;			/* producer index (free-running), cqev/cq_event.c */
	uint32_t untouched;		/* entries after pi still the memfd's zeros, cqe.c */
	struct rocemu_charge charge;	/* limits.h */
	uint8_t fired_sn;		/* arm sequence number of the last event */
	/*
	 * As a ConnectX's CQ context (last_notified_index, last_solicit_index):
	 * pi when the last event was raised (the CQEs before it were reported
	 * by one), and pi just past the newest solicited or error CQE; both
	 * kept within ncqe of pi (cqev/cq_event.c).
	 */
	uint32_t notified, solicited;
	uint64_t overruns;
	struct rocemu_direct direct;	/* handed out by mlx5dv_init_obj (direct.c) */
	uint64_t direct_seen;		/* its doorbell record as the scan last saw it */
};

/*
 * Create a CQ of at least req->cqe entries. Returns 0 with the layout and
 * the memfd in *fd (to be sent and closed); -EINVAL for cqe outside
 * 1..max_cqe or a channel c does not own; -ENOMEM at the device limit.
 */
int rocemu_cq_create(struct rocemu_client *c, const struct rocemu_create_cq_req *req,
		     struct rocemu_cq_layout *layout, int *fd);
/* Give the CQ a new ring of at least req->cqe entries (a new memfd in *fd). */
int rocemu_cq_resize(struct rocemu_client *c, const struct rocemu_resize_cq_req *req,
		     struct rocemu_cq_layout *layout, int *fd);
/* -EBUSY while a QP uses it. */
int rocemu_cq_destroy(struct rocemu_client *c, uint32_t cqn);
struct rocemu_cq *rocemu_cq_lookup(struct rocemu_client *c, uint32_t cqn);
/* CQs as objects of their context (object.h), freed when it closes. */
extern const struct rocemu_obj_kind rocemu_cq_kind;

#endif /* ROCEMU_EMULATOR_CQ_H */
