/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * An Ethernet frame's headers as a ConnectX parses them on receive: the
 * MACs, one 802.1Q tag, IPv4 or IPv6, TCP or UDP, and a VXLAN tunnel on
 * UDP 4789. Steering matches on it, the CQE reports its L3/L4 types and
 * checksum verdicts, RSS hashes its fields. The frame is untrusted: a
 * length that lies ends the parse at the layer that lies.
 */
#ifndef ROCEMU_NET_ETH_FRAME_H
#define ROCEMU_NET_ETH_FRAME_H

#include <stdbool.h>
#include <stdint.h>

#define ROCEMU_ETH_ALEN 6
#define ROCEMU_ETH_HLEN 14
#define ROCEMU_VLAN_HLEN 4
#define ROCEMU_ETH_FCS_LEN 4
#define ROCEMU_VXLAN_PORT 4789

enum rocemu_eth_l3 {
	ROCEMU_ETH_L3_NONE,
	ROCEMU_ETH_L3_IPV4,
	ROCEMU_ETH_L3_IPV6,
};

enum rocemu_eth_l4 {
	ROCEMU_ETH_L4_NONE,		/* no IP, a fragment past the first, or a protocol not parsed */
	ROCEMU_ETH_L4_TCP,
	ROCEMU_ETH_L4_UDP,
};

struct rocemu_eth_frame {
	const uint8_t *data;
	uint32_t len;
	uint8_t dmac[ROCEMU_ETH_ALEN];
	uint8_t smac[ROCEMU_ETH_ALEN];
	bool vlan;			/* an 802.1Q tag follows the source MAC */
	uint16_t vlan_tci;		/* host order */
	uint16_t ethertype;		/* after the tag, host order */
	enum rocemu_eth_l3 l3;
	uint16_t l3_off;		/* the IP header's offset in data */
	uint16_t l3_len;		/* its header bytes (IPv4 IHL * 4, IPv6 40) */
	uint8_t ip_proto;		/* IPv4 protocol, IPv6 next header */
	uint8_t tos;			/* IPv4 TOS, IPv6 traffic class */
	uint8_t ttl;			/* IPv4 TTL, IPv6 hop limit */
	uint32_t flow_label;		/* IPv6, host order */
	uint8_t saddr[16], daddr[16];	/* IPv4: the first 4 bytes; network order */
	bool fragment;			/* IPv4 MF set or offset not 0 */
	enum rocemu_eth_l4 l4;
	uint16_t l4_off;
	uint16_t sport, dport;		/* host order */
	uint8_t tcp_flags;
	bool l4_cut;			/* the IP length claims more than the frame holds */
	bool l3_csum_ok;		/* IPv4 header checksum right (IPv6: true) */
	bool l4_csum_ok;		/* TCP/UDP checksum right (UDP over IPv4 with 0: true) */
	bool vxlan;			/* UDP to 4789 with the VXLAN I flag */
	uint32_t vni;			/* host order */
	uint16_t inner_off;		/* the inner Ethernet frame's offset in data */
};

/* Parse len bytes at frame into f; false when shorter than an Ethernet header. */
bool rocemu_eth_parse(struct rocemu_eth_frame *f, const uint8_t *frame, uint32_t len);

/* Whether mac is a broadcast or multicast address (its I/G bit). */
static inline bool rocemu_eth_mac_group(const uint8_t *mac)
{
	return mac[0] & 1;
}

#endif /* ROCEMU_NET_ETH_FRAME_H */
