/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A frame's fields, and whether a rule's value under its mask holds for them. */
#include "emulator/eth/flow_match.h"

#include <string.h>

void rocemu_flow_fields_of(const struct rocemu_eth_frame *f, struct rocemu_flow_fields *out)
{
	memset(out, 0, sizeof(*out));
	memcpy(out->dmac, f->dmac, ROCEMU_ETH_ALEN);
	memcpy(out->smac, f->smac, ROCEMU_ETH_ALEN);
	out->ethertype = f->ethertype;
	out->vlan = f->vlan;
	out->vlan_tci = f->vlan ? f->vlan_tci : 0;
	out->l3 = (uint8_t)f->l3;
	if (f->l3 != ROCEMU_ETH_L3_NONE) {
		out->ip_proto = f->ip_proto;
		out->tos = f->tos;
		memcpy(out->saddr, f->saddr, sizeof(out->saddr));
		memcpy(out->daddr, f->daddr, sizeof(out->daddr));
		out->flow_label = f->flow_label;
	}
	if (f->l4 != ROCEMU_ETH_L4_NONE) {
		out->sport = f->sport;
		out->dport = f->dport;
	}
	out->vxlan = f->vxlan;
	out->vni = f->vxlan ? f->vni : 0;
}

bool rocemu_flow_fields_match(const struct rocemu_flow_fields *val,
			      const struct rocemu_flow_fields *mask,
			      const struct rocemu_flow_fields *frame)
{
	const uint8_t *v = (const uint8_t *)val, *k = (const uint8_t *)mask;
	const uint8_t *f = (const uint8_t *)frame;
	size_t i;

	/* Byte by byte: the three are laid out alike, their padding zero. */
	for (i = 0; i < sizeof(*val); i++)
		if ((f[i] & k[i]) != v[i])
			return false;
	return true;
}
