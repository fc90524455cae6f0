/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * mlx5dv flow matchers of an emulated device (mlx5dv_create_flow_matcher,
 * mlx5dv_create_flow, mlx5dv_destroy_flow_matcher) on the NIC RX table: a
 * matcher keeps its mask in the device's format (fte_match_param); a flow
 * of it to a QP is the ibv_create_flow rule of the same match, an ETH spec
 * of the outer source and destination MACs and EtherType, which is what
 * this device matches of the format. A mask naming other fields, another
 * table or another action is EOPNOTSUPP, as mlx5 answers without the cap.
 */
#include "lib/shim.h"
#include "lib/dv/dv.h"

#include <linux/if_ether.h>
#include <stdlib.h>
#include <string.h>

/* fte_match_set_lyr_2_4, the outer headers at the start of fte_match_param. */
#define OUTER_SMAC 0		/* smac_47_16, smac_15_0 */
#define OUTER_ETHERTYPE 6
#define OUTER_DMAC 8		/* dmac_47_16, dmac_15_0 */
#define OUTER_L2_END 14		/* the bytes of the mask this device matches */
#define CRITERIA_OUTER 1u	/* match_criteria_enable: outer headers */

_Static_assert(sizeof(struct ibv_flow_attr) % 4 == 0, "an ETH spec follows the attr with no padding");

struct rocemu_flow_matcher {
	struct ibv_context *context;
	uint16_t priority;
	uint32_t flags;
	uint8_t mask[OUTER_L2_END];
	struct rocemu_flow_matcher *next;	/* in the list of the shim's matchers */
};

static struct rocemu_flow_matcher *matchers;
static pthread_mutex_t matchers_lock = PTHREAD_MUTEX_INITIALIZER;

/* The shim's matcher behind dv (unlinked when asked), or NULL: the provider's. */
static struct rocemu_flow_matcher *matcher_find(const struct mlx5dv_flow_matcher *dv, bool unlink)
{
	struct rocemu_flow_matcher **p, *m = NULL;

	pthread_mutex_lock(&matchers_lock);
	for (p = &matchers; *p; p = &(*p)->next) {
		if ((const void *)*p == (const void *)dv) {
			m = *p;
			if (unlink)
				*p = m->next;
			break;
		}
	}
	pthread_mutex_unlock(&matchers_lock);
	return m;
}

/* Whether the bytes of buf from off on are all zero. */
static bool zero_from(const uint8_t *buf, size_t len, size_t off)
{
	for (; off < len; off++)
		if (buf[off])
			return false;
	return true;
}

struct mlx5dv_flow_matcher *mlx5dv_create_flow_matcher(struct ibv_context *context,
						       struct mlx5dv_flow_matcher_attr *attr)
{
	const struct mlx5dv_flow_match_parameters *mask = attr ? attr->match_mask : NULL;
	struct rocemu_flow_matcher *m;
	size_t n;

	if (!rocemu_ctx_is_ours(context))
		return REAL(mlx5dv_create_flow_matcher)(context, attr);
	if (!rocemu_dv_plays(context->device, ROCEMU_MODEL_CX5))
		return dv_refuse();
	if (!attr || attr->type != IBV_FLOW_ATTR_NORMAL || !mask ||
	    (attr->comp_mask & ~(uint64_t)MLX5DV_FLOW_MATCHER_MASK_FT_TYPE))
		return dv_fail(EINVAL);
	if (((attr->comp_mask & MLX5DV_FLOW_MATCHER_MASK_FT_TYPE) &&
	     attr->ft_type != MLX5DV_FLOW_TABLE_TYPE_NIC_RX) ||
	    (attr->match_criteria_enable & ~CRITERIA_OUTER) ||
	    !zero_from((const uint8_t *)mask->match_buf, mask->match_sz, OUTER_L2_END))
		return dv_refuse();
	m = calloc(1, sizeof(*m));
	if (!m)
		return dv_fail(ENOMEM);
	m->context = context;
	m->priority = attr->priority;
	m->flags = attr->flags;
	n = mask->match_sz < sizeof(m->mask) ? mask->match_sz : sizeof(m->mask);
	if (attr->match_criteria_enable & CRITERIA_OUTER)
		memcpy(m->mask, mask->match_buf, n);
	pthread_mutex_lock(&matchers_lock);
	m->next = matchers;
	matchers = m;
	pthread_mutex_unlock(&matchers_lock);
	return (struct mlx5dv_flow_matcher *)(void *)m;
}

int mlx5dv_destroy_flow_matcher(struct mlx5dv_flow_matcher *dv)
{
	struct rocemu_flow_matcher *m = matcher_find(dv, true);

	if (!m)
		return REAL(mlx5dv_destroy_flow_matcher)(dv);
	free(m);
	return 0;
}

struct ibv_flow *mlx5dv_create_flow(struct mlx5dv_flow_matcher *dv,
				    struct mlx5dv_flow_match_parameters *value, size_t num_actions,
				    struct mlx5dv_flow_action_attr actions[])
{
	struct rocemu_flow_matcher *m = matcher_find(dv, false);
	struct {
		struct ibv_flow_attr attr;
		struct ibv_flow_spec_eth eth;
	} rule = { 0 };	/* the spec right after the attr, as ibv_create_flow reads it */
	uint8_t val[OUTER_L2_END] = { 0 };
	struct ibv_qp *qp = NULL;
	size_t i;

	if (!m)
		return REAL(mlx5dv_create_flow)(dv, value, num_actions, actions);
	/* Steering to one of the device's QPs; counters, tags, DevX and modify actions are not emulated. */
	for (i = 0; i < num_actions; i++) {
		if (actions[i].type != MLX5DV_FLOW_ACTION_DEST_IBV_QP || qp)
			return dv_refuse();
		qp = actions[i].qp;
	}
	if (!qp || qp->context != m->context || !value)
		return dv_fail(EINVAL);
	memcpy(val, value->match_buf, value->match_sz < sizeof(val) ? value->match_sz : sizeof(val));
	for (i = 0; i < sizeof(val); i++)
		val[i] &= m->mask[i];
	rule.attr = (struct ibv_flow_attr){ .type = IBV_FLOW_ATTR_NORMAL, .size = sizeof(rule),
					    .priority = m->priority, .num_of_specs = 1,
					    .port = 1, .flags = m->flags };
	rule.eth.type = IBV_FLOW_SPEC_ETH;
	rule.eth.size = sizeof(rule.eth);
	memcpy(rule.eth.val.src_mac, val + OUTER_SMAC, ETH_ALEN);
	memcpy(rule.eth.mask.src_mac, m->mask + OUTER_SMAC, ETH_ALEN);
	memcpy(rule.eth.val.dst_mac, val + OUTER_DMAC, ETH_ALEN);
	memcpy(rule.eth.mask.dst_mac, m->mask + OUTER_DMAC, ETH_ALEN);
	memcpy(&rule.eth.val.ether_type, val + OUTER_ETHERTYPE, sizeof(rule.eth.val.ether_type));
	memcpy(&rule.eth.mask.ether_type, m->mask + OUTER_ETHERTYPE, sizeof(rule.eth.mask.ether_type));
	return ibv_create_flow(qp, &rule.attr);
}
