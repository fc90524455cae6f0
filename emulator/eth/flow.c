/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/eth/flow.h"

#include <errno.h>
#include <linux/capability.h>
#include <stdlib.h>

#include "emulator/core/device.h"
#include "emulator/obj/qp.h"
#include "rocemu/log.h"

/* Rules of the whole daemon at the most: a ConnectX's flow table of 2^16 entries. */
#define FLOW_MAX (1u << 16)
/* uverbs takes flags below IB_FLOW_ATTR_FLAGS_RESERVED, mlx5 these two of them. */
#define FLOW_FLAGS (IBV_FLOW_ATTR_FLAGS_DONT_TRAP | IBV_FLOW_ATTR_FLAGS_EGRESS)
#define FLOW_FLAGS_RESERVED (1u << 3)

static void flow_free(struct rocemu_emu *emu, struct rocemu_flow *f)
{
	rocemu_obj_remove(emu, &rocemu_flow_kind, f);
	if (f->type == IBV_FLOW_ATTR_SNIFFER && !rocemu_list_empty(&f->dev_node))
		f->dev->sniffers--;
	rocemu_list_del(&f->dev_node);
	f->qp->flows--;
	free(f);
}

ROCEMU_OBJ_KIND(rocemu_flow_kind, struct rocemu_flow, struct rocemu_client, flows, flows, owner,
		handle, node, flow_free, .first = 1, .max = FLOW_MAX);

/* The order steering tries a device's rules in: NORMAL by table, oldest first within one; then the others. */
static uint32_t flow_order(const struct rocemu_flow *f)
{
	return f->type == IBV_FLOW_ATTR_NORMAL ? f->table : UINT32_MAX;
}

static void flow_link(struct rocemu_device *dev, struct rocemu_flow *f)
{
	struct rocemu_flow *pos;

	rocemu_list_for_each(pos, &dev->flows, struct rocemu_flow, dev_node)
		if (flow_order(pos) > flow_order(f))
			break;
	rocemu_list_add_tail(&pos->dev_node, &f->dev_node);
	if (f->type == IBV_FLOW_ATTR_SNIFFER)
		dev->sniffers++;
}

/* uverbs' checks of the attributes, before the QP and the specs. */
static int attr_check(const struct rocemu_create_flow_req *req)
{
	bool leftovers = req->type == IBV_FLOW_ATTR_ALL_DEFAULT ||
			 req->type == IBV_FLOW_ATTR_MC_DEFAULT;

	if (req->flags >= FLOW_FLAGS_RESERVED || req->reserved)
		return -EINVAL;
	if ((req->flags & IBV_FLOW_ATTR_FLAGS_DONT_TRAP) && leftovers)
		return -EINVAL;
	if (req->specs_len > sizeof(req->specs))
		return -EINVAL;
	return 0;
}

/* mlx5_ib_create_flow's checks, in its order. */
static int mlx5_check(const struct rocemu_create_flow_req *req)
{
	bool leftovers = req->type == IBV_FLOW_ATTR_ALL_DEFAULT ||
			 req->type == IBV_FLOW_ATTR_MC_DEFAULT;

	if (req->priority > ROCEMU_FLOW_LAST_PRIO)
		return -ENOMEM;
	if (req->flags & ~FLOW_FLAGS || req->port > ROCEMU_PORT_NUM)
		return -EINVAL;
	if ((req->flags & IBV_FLOW_ATTR_FLAGS_EGRESS) && leftovers)
		return -EINVAL;
	return req->type > IBV_FLOW_ATTR_SNIFFER ? -EINVAL : 0;
}

/* Its QP: uverbs steers to UD and RAW_PACKET QPs; this port's frames go to RAW_PACKET ones only. */
static int flow_qp(struct rocemu_client *c, uint32_t qpn, struct rocemu_qp **qp)
{
	*qp = rocemu_qp_lookup(c, qpn);
	if (!*qp)
		return -EINVAL;
	if ((*qp)->type == IBV_QPT_UD)
		return -EOPNOTSUPP;
	return (*qp)->type == IBV_QPT_RAW_PACKET ? 0 : -EINVAL;
}

int rocemu_flow_create(struct rocemu_client *c, const struct rocemu_create_flow_req *req,
		       uint32_t *handle)
{
	struct ibv_flow_spec specs[ROCEMU_FLOW_SPECS_LAYERS];
	struct rocemu_flow_match match = { .tag = 0 };
	struct rocemu_flow *f;
	struct rocemu_qp *qp;
	int err;

	/* uverbs asks for CAP_NET_RAW before it reads the rule: a rule sees others' frames. */
	if (!rocemu_client_capable(c, CAP_NET_RAW))
		return -EPERM;
	err = attr_check(req);
	if (!err)
		err = rocemu_flow_specs_read(req->specs, req->specs_len, req->num_of_specs, specs);
	if (!err)
		err = flow_qp(c, req->qpn, &qp);
	if (!err)
		err = mlx5_check(req);
	/* mlx5 builds a NORMAL rule from its specs; the others take what their type says. */
	if (!err && req->type == IBV_FLOW_ATTR_NORMAL)
		err = rocemu_flow_match_build(specs, req->num_of_specs, &match);
	if (err)
		return err;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	err = rocemu_obj_add(c->emu, &rocemu_flow_kind, c, f);
	if (err) {
		free(f);
		return err;
	}
	f->dev = c->dev;
	f->qp = qp;
	f->type = (enum ibv_flow_attr_type)req->type;
	f->dont_trap = req->flags & IBV_FLOW_ATTR_FLAGS_DONT_TRAP;
	f->table = req->priority * 2u + !f->dont_trap;
	f->match = match;
	qp->flows++;
	/* mlx5's egress rules only let a frame pass (IPsec aside): on no list, they act on nothing. */
	rocemu_list_init(&f->dev_node);
	if (!(req->flags & IBV_FLOW_ATTR_FLAGS_EGRESS))
		flow_link(c->dev, f);
	*handle = f->handle;
	rocemu_log(ROCEMU_LOG_DEBUG, "%s qp 0x%06x flow %u type %u priority %u%s", c->dev->name,
		   qp->qpn, f->handle, req->type, req->priority, f->dont_trap ? " dont_trap" : "");
	return 0;
}

int rocemu_flow_destroy(struct rocemu_client *c, uint32_t handle)
{
	struct rocemu_flow *f = rocemu_obj_lookup(c->emu, &rocemu_flow_kind, c, handle);

	if (!f)
		return -EINVAL;
	rocemu_log(ROCEMU_LOG_DEBUG, "%s qp 0x%06x flow %u destroyed", c->dev->name, f->qp->qpn,
		   f->handle);
	flow_free(c->emu, f);
	return 0;
}
