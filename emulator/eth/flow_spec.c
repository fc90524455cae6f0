/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A rule's ibv_flow_spec list, read and checked as uverbs and mlx5's parse_flow_attr do. */
#include "emulator/eth/flow_match.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <netinet/in.h>
#include <stddef.h>
#include <string.h>

/* The size of a spec of type; 0 for a type uverbs does not know. */
static size_t spec_size(uint32_t type)
{
	/* uverbs takes the INNER bit on header specs only, never on a tunnel's. */
	if ((type & IBV_FLOW_SPEC_INNER) &&
	    (type >= IBV_FLOW_SPEC_ACTION_TAG || type == (IBV_FLOW_SPEC_INNER | IBV_FLOW_SPEC_VXLAN_TUNNEL)))
		return 0;
	switch (type & ~IBV_FLOW_SPEC_INNER) {
	case IBV_FLOW_SPEC_ETH:
		return sizeof(struct ibv_flow_spec_eth);
	case IBV_FLOW_SPEC_IPV4:
		return sizeof(struct ibv_flow_spec_ipv4);
	case IBV_FLOW_SPEC_IPV4_EXT:
		return sizeof(struct ibv_flow_spec_ipv4_ext);
	case IBV_FLOW_SPEC_IPV6:
		return sizeof(struct ibv_flow_spec_ipv6);
	case IBV_FLOW_SPEC_ESP:
		return sizeof(struct ibv_flow_spec_esp);
	case IBV_FLOW_SPEC_TCP:
	case IBV_FLOW_SPEC_UDP:
		return sizeof(struct ibv_flow_spec_tcp_udp);
	case IBV_FLOW_SPEC_VXLAN_TUNNEL:
		return sizeof(struct ibv_flow_spec_tunnel);
	case IBV_FLOW_SPEC_GRE:
		return sizeof(struct ibv_flow_spec_gre);
	case IBV_FLOW_SPEC_MPLS:
		return sizeof(struct ibv_flow_spec_mpls);
	case IBV_FLOW_SPEC_ACTION_TAG:
		return sizeof(struct ibv_flow_spec_action_tag);
	case IBV_FLOW_SPEC_ACTION_DROP:
		return sizeof(struct ibv_flow_spec_action_drop);
	case IBV_FLOW_SPEC_ACTION_HANDLE:
		return sizeof(struct ibv_flow_spec_action_handle);
	case IBV_FLOW_SPEC_ACTION_COUNT:
		return sizeof(struct ibv_flow_spec_counter_action);
	default:
		return 0;
	}
}

/* uverbs' value checks: a VNI is 24 bits, an IPv6 flow label 20. */
static int spec_values_check(const struct ibv_flow_spec *s)
{
	switch (s->hdr.type & ~IBV_FLOW_SPEC_INNER) {
	case IBV_FLOW_SPEC_VXLAN_TUNNEL:
		return ntohl(s->tunnel.val.tunnel_id) >> 24 || ntohl(s->tunnel.mask.tunnel_id) >> 24
			       ? -EINVAL : 0;
	case IBV_FLOW_SPEC_IPV6:
		return ntohl(s->ipv6.val.flow_label) >> 20 || ntohl(s->ipv6.mask.flow_label) >> 20
			       ? -EINVAL : 0;
	/* Flow actions and counters are objects of their own, of which there are none here. */
	case IBV_FLOW_SPEC_ACTION_HANDLE:
	case IBV_FLOW_SPEC_ACTION_COUNT:
		return -EINVAL;
	default:
		return 0;
	}
}

int rocemu_flow_specs_read(const uint8_t *specs, uint32_t len, unsigned int num,
			   struct ibv_flow_spec *out)
{
	struct ibv_flow_spec *s;
	uint32_t off = 0;
	unsigned int i;
	int err;

	if (num > ROCEMU_FLOW_SPECS_LAYERS)
		return -EINVAL;
	for (i = 0; i < num; i++) {
		s = &out[i];
		memset(s, 0, sizeof(*s));
		if (len - off < sizeof(s->hdr))
			return -EINVAL;
		memcpy(&s->hdr, specs + off, sizeof(s->hdr));
		if (!spec_size(s->hdr.type) || s->hdr.size != spec_size(s->hdr.type) ||
		    s->hdr.size > len - off)
			return -EINVAL;
		memcpy(s, specs + off, s->hdr.size);
		err = spec_values_check(s);
		if (err)
			return err;
		off += s->hdr.size;
	}
	/* uverbs: bytes left after the specs are an error. */
	return off == len ? 0 : -EINVAL;
}

/* mlx5's set_proto: a protocol once matched may be matched again only alike. */
static int set_proto(struct rocemu_flow_fields *val, struct rocemu_flow_fields *mask, uint8_t m,
		     uint8_t v)
{
	if (!m)
		return 0;
	if (!mask->ip_proto) {
		mask->ip_proto = m;
		val->ip_proto = v;
		return 0;
	}
	return mask->ip_proto == m && val->ip_proto == v ? 0 : -EINVAL;
}

static void set_l3(struct rocemu_flow_fields *val, struct rocemu_flow_fields *mask,
		   enum rocemu_eth_l3 l3)
{
	mask->l3 = 0xff;
	val->l3 = (uint8_t)l3;
}

static void spec_eth(const struct ibv_flow_spec_eth *s, struct rocemu_flow_fields *val,
		     struct rocemu_flow_fields *mask)
{
	memcpy(val->dmac, s->val.dst_mac, ROCEMU_ETH_ALEN);
	memcpy(mask->dmac, s->mask.dst_mac, ROCEMU_ETH_ALEN);
	memcpy(val->smac, s->val.src_mac, ROCEMU_ETH_ALEN);
	memcpy(mask->smac, s->mask.src_mac, ROCEMU_ETH_ALEN);
	val->ethertype = ntohs(s->val.ether_type);
	mask->ethertype = ntohs(s->mask.ether_type);
	/* mlx5: a VLAN mask matches tagged frames only (cvlan_tag), and their TCI's bits. */
	if (s->mask.vlan_tag) {
		val->vlan = mask->vlan = 1;
		val->vlan_tci = ntohs(s->val.vlan_tag);
		mask->vlan_tci = ntohs(s->mask.vlan_tag);
	}
}

/* IPV4 and IPV4_EXT alike: libibverbs hands both to the kernel as its IPv4 filter. */
static int spec_ipv4(const struct ibv_flow_ipv4_ext_filter *v, const struct ibv_flow_ipv4_ext_filter *m,
		     struct rocemu_flow_fields *val, struct rocemu_flow_fields *mask)
{
	/* mlx5 matches up to the TOS (LAST_IPV4_FIELD): not TTL, not flags. */
	if (m->ttl || m->flags)
		return -EOPNOTSUPP;
	set_l3(val, mask, ROCEMU_ETH_L3_IPV4);
	memcpy(val->saddr, &v->src_ip, 4);
	memcpy(mask->saddr, &m->src_ip, 4);
	memcpy(val->daddr, &v->dst_ip, 4);
	memcpy(mask->daddr, &m->dst_ip, 4);
	val->tos = v->tos;
	mask->tos = m->tos;
	return set_proto(val, mask, m->proto, v->proto);
}

static int spec_ipv6(const struct ibv_flow_spec_ipv6 *s, struct rocemu_flow_fields *val,
		     struct rocemu_flow_fields *mask)
{
	/* mlx5 matches up to the traffic class (LAST_IPV6_FIELD): not the hop limit. */
	if (s->mask.hop_limit)
		return -EOPNOTSUPP;
	set_l3(val, mask, ROCEMU_ETH_L3_IPV6);
	memcpy(val->saddr, s->val.src_ip, 16);
	memcpy(mask->saddr, s->mask.src_ip, 16);
	memcpy(val->daddr, s->val.dst_ip, 16);
	memcpy(mask->daddr, s->mask.dst_ip, 16);
	val->tos = s->val.traffic_class;
	mask->tos = s->mask.traffic_class;
	val->flow_label = ntohl(s->val.flow_label);
	mask->flow_label = ntohl(s->mask.flow_label);
	return set_proto(val, mask, s->mask.next_hdr, s->val.next_hdr);
}

static int spec_ports(const struct ibv_flow_spec_tcp_udp *s, uint8_t proto,
		      struct rocemu_flow_fields *val, struct rocemu_flow_fields *mask)
{
	val->sport = ntohs(s->val.src_port);
	mask->sport = ntohs(s->mask.src_port);
	val->dport = ntohs(s->val.dst_port);
	mask->dport = ntohs(s->mask.dst_port);
	return set_proto(val, mask, 0xff, proto);
}

static int spec_parse(const struct ibv_flow_spec *s, struct rocemu_flow_match *m)
{
	int level = s->hdr.type & IBV_FLOW_SPEC_INNER ? ROCEMU_FLOW_INNER : ROCEMU_FLOW_OUTER;
	struct rocemu_flow_fields *val = &m->val[level], *mask = &m->mask[level];

	if (level == ROCEMU_FLOW_INNER)
		m->inner = true;
	switch (s->hdr.type & ~IBV_FLOW_SPEC_INNER) {
	case IBV_FLOW_SPEC_ETH:
		spec_eth(&s->eth, val, mask);
		return 0;
	case IBV_FLOW_SPEC_IPV4: {
		const struct ibv_flow_ipv4_ext_filter v = { .src_ip = s->ipv4.val.src_ip,
							    .dst_ip = s->ipv4.val.dst_ip };
		const struct ibv_flow_ipv4_ext_filter k = { .src_ip = s->ipv4.mask.src_ip,
							    .dst_ip = s->ipv4.mask.dst_ip };

		return spec_ipv4(&v, &k, val, mask);
	}
	case IBV_FLOW_SPEC_IPV4_EXT:
		return spec_ipv4(&s->ipv4_ext.val, &s->ipv4_ext.mask, val, mask);
	case IBV_FLOW_SPEC_IPV6:
		return spec_ipv6(&s->ipv6, val, mask);
	case IBV_FLOW_SPEC_TCP:
		return spec_ports(&s->tcp_udp, IPPROTO_TCP, val, mask);
	case IBV_FLOW_SPEC_UDP:
		return spec_ports(&s->tcp_udp, IPPROTO_UDP, val, mask);
	case IBV_FLOW_SPEC_VXLAN_TUNNEL:
		val->vxlan = mask->vxlan = 1;
		val->vni = ntohl(s->tunnel.val.tunnel_id);
		mask->vni = ntohl(s->tunnel.mask.tunnel_id);
		return 0;
	case IBV_FLOW_SPEC_ACTION_TAG:
		/* mlx5's flow tag is 24 bits. */
		if (s->flow_tag.tag_id >> 24)
			return -EINVAL;
		m->tag = s->flow_tag.tag_id;
		return 0;
	case IBV_FLOW_SPEC_ACTION_DROP:
		m->drop = true;
		return 0;
	default:
		/* ESP (mlx5: crypto only), GRE and MPLS: headers this port does not parse. */
		return -EOPNOTSUPP;
	}
}

/*
 * mlx5's is_valid_ethertype: an ETH spec that names an EtherType beside an
 * IP spec of its level must name it whole, and as that IP version's.
 */
static bool ethertype_valid(const struct ibv_flow_spec *specs, unsigned int num, uint32_t inner)
{
	bool has_ethertype = false, mask_valid = true;
	uint32_t ip_type = 0;
	uint16_t ethertype = 0;
	unsigned int i;

	for (i = 0; i < num; i++) {
		const struct ibv_flow_spec *s = &specs[i];

		if (s->hdr.type == (IBV_FLOW_SPEC_ETH | inner) && s->eth.mask.ether_type) {
			mask_valid = s->eth.mask.ether_type == htons(0xffff);
			has_ethertype = true;
			ethertype = ntohs(s->eth.val.ether_type);
		} else if (s->hdr.type == (IBV_FLOW_SPEC_IPV4 | inner) ||
			   s->hdr.type == (IBV_FLOW_SPEC_IPV4_EXT | inner)) {
			ip_type = ETH_P_IP;
		} else if (s->hdr.type == (IBV_FLOW_SPEC_IPV6 | inner)) {
			ip_type = ETH_P_IPV6;
		}
	}
	return !has_ethertype || !ip_type || (mask_valid && ethertype == ip_type);
}

/* fs_core's check_valid_spec: a value bit outside its mask is refused. */
static bool values_in_masks(const struct rocemu_flow_match *m)
{
	const uint8_t *v = (const uint8_t *)m->val, *k = (const uint8_t *)m->mask;
	size_t i;

	for (i = 0; i < sizeof(m->val); i++)
		if (v[i] & ~k[i])
			return false;
	return true;
}

int rocemu_flow_match_build(const struct ibv_flow_spec *specs, unsigned int num,
			    struct rocemu_flow_match *m)
{
	unsigned int i;
	int err;

	memset(m, 0, sizeof(*m));
	if (!ethertype_valid(specs, num, 0) || !ethertype_valid(specs, num, IBV_FLOW_SPEC_INNER))
		return -EINVAL;
	for (i = 0; i < num; i++) {
		err = spec_parse(&specs[i], m);
		if (err)
			return err;
	}
	if (!values_in_masks(m))
		return -EINVAL;
	/* Inner headers are those of a VXLAN tunnel's frame: only a tunnel has them. */
	if (m->inner)
		m->val[ROCEMU_FLOW_OUTER].vxlan = m->mask[ROCEMU_FLOW_OUTER].vxlan = 1;
	return 0;
}
