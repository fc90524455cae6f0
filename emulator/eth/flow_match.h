/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * What a steering rule matches: the header fields of a frame (outer, and
 * inner past a VXLAN tunnel) as a value under a mask, built from the
 * rule's ibv_flow_spec list with the checks uverbs and mlx5 make, and a
 * frame's own fields to hold against it.
 */
#ifndef ROCEMU_EMULATOR_FLOW_MATCH_H
#define ROCEMU_EMULATOR_FLOW_MATCH_H

#include <stdbool.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#include "net/eth/eth_frame.h"

/* uverbs' IB_FLOW_SPEC_SUPPORT_LAYERS: specs of one rule at the most. */
#define ROCEMU_FLOW_SPECS_LAYERS 10

/* The fields a ConnectX matches, in host order; zero where a frame has none. */
struct rocemu_flow_fields {
	uint8_t dmac[ROCEMU_ETH_ALEN], smac[ROCEMU_ETH_ALEN];
	uint16_t ethertype;		/* after an 802.1Q tag */
	uint16_t vlan_tci;
	uint8_t vlan;			/* 1: the frame has an 802.1Q tag (mlx5's cvlan_tag) */
	uint8_t l3;			/* enum rocemu_eth_l3 (mlx5's ip_version) */
	uint8_t ip_proto, tos;
	uint8_t saddr[16], daddr[16];	/* IPv4: the first 4 bytes */
	uint32_t flow_label;
	uint16_t sport, dport;		/* TCP or UDP */
	uint8_t vxlan;			/* 1: a VXLAN tunnel (outer only) */
	uint32_t vni;
};

enum { ROCEMU_FLOW_OUTER, ROCEMU_FLOW_INNER, ROCEMU_FLOW_LEVELS };

struct rocemu_flow_match {
	struct rocemu_flow_fields val[ROCEMU_FLOW_LEVELS], mask[ROCEMU_FLOW_LEVELS];
	bool inner;			/* some inner field is matched: only a tunnelled frame can */
	bool drop;			/* IBV_FLOW_SPEC_ACTION_DROP */
	uint32_t tag;			/* IBV_FLOW_SPEC_ACTION_TAG's, to the CQE; 0: none */
};

/*
 * Read the num specs in specs[0, len) into out, as uverbs converts them:
 * each spec's size is its type's, every byte is used. 0 or -EINVAL.
 */
int rocemu_flow_specs_read(const uint8_t *specs, uint32_t len, unsigned int num,
			   struct ibv_flow_spec *out);

/* A NORMAL rule's specs as mlx5 parses them into m: 0, -EINVAL or -EOPNOTSUPP (a field it cannot match). */
int rocemu_flow_match_build(const struct ibv_flow_spec *specs, unsigned int num,
			    struct rocemu_flow_match *m);

/* The fields of a parsed frame. */
void rocemu_flow_fields_of(const struct rocemu_eth_frame *f, struct rocemu_flow_fields *out);

/* Whether frame's fields are val's where mask has bits. */
bool rocemu_flow_fields_match(const struct rocemu_flow_fields *val,
			      const struct rocemu_flow_fields *mask,
			      const struct rocemu_flow_fields *frame);

#endif /* ROCEMU_EMULATOR_FLOW_MATCH_H */
