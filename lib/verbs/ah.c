/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Address handles. On mlx5 and mlx4 an AH is a userspace object holding
 * the address vector (struct mlx5_wqe_av, struct mlx4_av) that each UD
 * send WQE carries in its datagram segment; for RoCE the kernel only resolves the peer's MAC. Here
 * nothing needs the daemon: the AV names the destination GID (an
 * IPv4-mapped address, rocemu's only kind) and, in rlid, the UDP source
 * port, which mlx5 derives from the flow label or, without one, draws at
 * random from 0xC000-0xFFFF for each AH.
 */
#include "lib/shim.h"

#include <arpa/inet.h>
#include <netinet/ip.h>
#include <stdlib.h>
#include <string.h>

#define ROCE_UDP_SPORT_MIN 0xc000u	/* mlx5 RROCE_UDP_SPORT_MIN */
#define ROCE_UDP_SPORT_SPAN 0x4000u
#define AV_SGID_SHIFT 20
#define FLOW_LABEL_MASK 0xfffffu
#define GRH_IPV4_OFFSET 20		/* RoCEv2 over IPv4: the header ends the 40-byte GRH */
#define MLX4_STAT_RATE_OFFSET 5		/* libmlx4: enum ibv_rate to the AV's stat_rate */
#define MLX4_AV_GLOBAL 0x80		/* g_slid: the packet has a GRH */

static const uint8_t ipv4_mapped_prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

/* mlx5's ib_to_mlx5_rate_table: enum ibv_rate to the AV's rate code (0: unlimited). */
static const uint8_t mlx5_rates[] = {
	0, 0, 7, 8, 9, 10, 11, 12, 13, 14, 15, 11, 13, 15, 0, 9, 15, 0, 0, 9, 13, 0, 0,
};

static uint8_t mlx5_rate(enum ibv_rate rate)
{
	return (unsigned int)rate < sizeof(mlx5_rates) ? mlx5_rates[rate] : 0;
}

/* RoCE: global, through GID 0 of port 1 (the only one), to an IPv4-mapped GID. */
static int ah_attr_check(const struct ibv_ah_attr *attr)
{
	if (!attr->is_global || attr->port_num != 1 || attr->grh.sgid_index != 0 ||
	    memcmp(attr->grh.dgid.raw, ipv4_mapped_prefix, sizeof(ipv4_mapped_prefix)))
		return EINVAL;
	return 0;
}

/*
 * The AV as mlx5_create_ah fills it for an Ethernet port: its rate code,
 * no GRH bit (reserved on RoCE, where every packet has one), and the UDP
 * source port of mlx5_ah_set_udp_sport.
 */
static void av_fill(struct mlx5_wqe_av *av, const struct ibv_ah_attr *attr)
{
	uint32_t flow_label = attr->grh.flow_label & FLOW_LABEL_MASK;

	memset(av, 0, sizeof(*av));
	av->stat_rate_sl = (uint8_t)((mlx5_rate(attr->static_rate) << 4) | ((attr->sl & 0x7) << 1));
	av->tclass = attr->grh.traffic_class;
	av->hop_limit = attr->grh.hop_limit;
	av->grh_gid_fl = htobe32((uint32_t)attr->grh.sgid_index << AV_SGID_SHIFT | flow_label);
	memcpy(av->rgid, attr->grh.dgid.raw, sizeof(av->rgid));
	av->rlid = htobe16(flow_label ? ibv_flow_label_to_udp_sport(flow_label) :
			   (uint16_t)(ROCE_UDP_SPORT_MIN + (uint32_t)rand() % ROCE_UDP_SPORT_SPAN));
}

/*
 * The same address as libmlx4's mlx4_create_ah writes it for an Ethernet
 * port: PD and port, the priority in sl_tclass_flowlabel's top 3 bits, the
 * rate past MLX4_STAT_RATE_OFFSET, and the GRH (g_slid bit 7) always.
 */
static void mlx4_av_fill(struct mlx4_av *av, uint32_t pdn, const struct ibv_ah_attr *attr)
{
	memset(av, 0, sizeof(*av));
	av->port_pd = htobe32(pdn | (uint32_t)attr->port_num << 24);
	if (attr->static_rate)
		av->stat_rate = (uint8_t)(attr->static_rate + MLX4_STAT_RATE_OFFSET);
	av->g_slid = MLX4_AV_GLOBAL;
	av->gid_index = attr->grh.sgid_index;
	av->hop_limit = attr->grh.hop_limit;
	av->sl_tclass_flowlabel = htobe32((uint32_t)attr->sl << 29 |
					  (uint32_t)attr->grh.traffic_class << 20 |
					  (attr->grh.flow_label & FLOW_LABEL_MASK));
	memcpy(av->dgid, attr->grh.dgid.raw, sizeof(av->dgid));
}

struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct rocemu_ah *ah;
	int err;

	if (!rocemu_pd_is_ours(pd))
		return REAL(ibv_create_ah)(pd, attr);
	err = ah_attr_check(attr);
	if (err) {
		errno = err;
		return NULL;
	}
	ah = calloc(1, sizeof(*ah));
	if (!ah) {
		errno = ENOMEM;
		return NULL;
	}
	av_fill(&ah->av, attr);
	mlx4_av_fill(&ah->mlx4_av, to_rpd(pd)->pdn, attr);
	ah->ibah.context = pd->context;
	ah->ibah.pd = pd;
	return &ah->ibah;
}

int ibv_destroy_ah(struct ibv_ah *ah)
{
	if (!rocemu_ctx_is_ours(ah->context))
		return REAL(ibv_destroy_ah)(ah);
	free(to_rah(ah));
	return 0;
}

/*
 * As libibverbs does for RoCEv2 over IPv4: the peer is the source address
 * of the IPv4 header in the GRH's last 20 bytes, our GID its destination,
 * the hop limit its TTL. Without a GRH the attributes are not global
 * (which ibv_create_ah refuses on RoCE); a GID of no entry fails as
 * ibv_find_gid_index does, -1 with EINVAL.
 */
int ibv_init_ah_from_wc(struct ibv_context *context, uint8_t port_num, struct ibv_wc *wc,
			struct ibv_grh *grh, struct ibv_ah_attr *ah_attr)
{
	struct iphdr ip;

	if (!rocemu_ctx_is_ours(context))
		return REAL(ibv_init_ah_from_wc)(context, port_num, wc, grh, ah_attr);
	memset(ah_attr, 0, sizeof(*ah_attr));
	ah_attr->port_num = port_num;
	ah_attr->dlid = wc->slid;
	ah_attr->sl = wc->sl;
	ah_attr->src_path_bits = wc->dlid_path_bits;
	if (!(wc->wc_flags & IBV_WC_GRH))
		return 0;
	ah_attr->grh.flow_label = be32toh(grh->version_tclass_flow) & FLOW_LABEL_MASK;
	ah_attr->is_global = 1;
	memcpy(&ip, (const uint8_t *)grh + GRH_IPV4_OFFSET, sizeof(ip));
	if (port_num != 1 || ip.version != 4 || ip.daddr != to_rctx(context)->info.ipv4) {
		errno = EINVAL;
		return -1;
	}
	memcpy(ah_attr->grh.dgid.raw, ipv4_mapped_prefix, sizeof(ipv4_mapped_prefix));
	memcpy(ah_attr->grh.dgid.raw + 12, &ip.saddr, sizeof(ip.saddr));
	ah_attr->grh.sgid_index = 0;
	ah_attr->grh.hop_limit = ip.ttl;
	ah_attr->grh.traffic_class = ip.tos;
	return 0;
}

struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc, struct ibv_grh *grh,
				     uint8_t port_num)
{
	struct ibv_ah_attr attr;
	int err;

	if (!rocemu_pd_is_ours(pd))
		return REAL(ibv_create_ah_from_wc)(pd, wc, grh, port_num);
	err = ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &attr);
	if (err)
		return NULL;
	return ibv_create_ah(pd, &attr);
}
