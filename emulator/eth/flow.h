/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Steering rules (ibv_create_flow): each hands the frames it matches on
 * its QP's port to that RAW_PACKET QP. A rule is an object of the context
 * that made it (object.h), released with it, and holds its QP, which
 * cannot be destroyed meanwhile (EBUSY). The device keeps its rules in
 * the order steering tries them (flow_steer.c).
 */
#ifndef ROCEMU_EMULATOR_FLOW_H
#define ROCEMU_EMULATOR_FLOW_H

#include <stdbool.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#include "emulator/core/client.h"
#include "emulator/core/object.h"
#include "emulator/eth/flow_match.h"
#include "rocemu/ctrl.h"

struct rocemu_qp;

/* mlx5's MLX5_IB_FLOW_LAST_PRIO: priorities 0 (tried first) .. 15. */
#define ROCEMU_FLOW_LAST_PRIO 15

struct rocemu_flow {
	struct rocemu_client *owner;
	struct rocemu_list node;	/* in owner->flows */
	uint32_t handle;
	struct rocemu_list dev_node;	/* in its device's flows; an EGRESS rule in none */
	struct rocemu_device *dev;
	struct rocemu_qp *qp;
	enum ibv_flow_attr_type type;
	bool dont_trap;			/* IBV_FLOW_ATTR_FLAGS_DONT_TRAP: steering goes on past it */
	/* NORMAL: mlx5's table of it (priority * 2, a DONT_TRAP rule's before a trapping one's) */
	uint32_t table;
	struct rocemu_flow_match match;	/* NORMAL: its specs */
};

/*
 * ibv_create_flow for c: a rule to its QP req->qpn. Returns 0 with
 * *handle set, or the errno uverbs and mlx5 give: -EPERM (no CAP_NET_RAW), -EINVAL (attributes,
 * sizes, a QP not RAW_PACKET), -EOPNOTSUPP (a field the port cannot
 * match), -ENOMEM (priority past ROCEMU_FLOW_LAST_PRIO, or out of rules).
 */
int rocemu_flow_create(struct rocemu_client *c, const struct rocemu_create_flow_req *req,
		       uint32_t *handle);
/* ibv_destroy_flow: 0, or -EINVAL when c holds no such rule. */
int rocemu_flow_destroy(struct rocemu_client *c, uint32_t handle);
/* Rules as objects of their context: released before its QPs. */
extern const struct rocemu_obj_kind rocemu_flow_kind;

#endif /* ROCEMU_EMULATOR_FLOW_H */
