/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* An Ethernet frame's headers parsed as a ConnectX does on receive (see eth_frame.h). */
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/ip6.h>
#include <netinet/tcp.h>
#include <netinet/udp.h>
#include <string.h>

#include "net/eth/eth_frame.h"
#include "net/eth/inet_csum.h"

#define VXLAN_HLEN 8
#define VXLAN_FLAG_I 0x08	/* the VNI is valid (RFC 7348) */
#define TCP_FLAGS_OFF 13	/* CWR ... FIN, the byte after the data offset */

static uint16_t get_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* The VXLAN header of UDP payload at off of end - off bytes, if it is one. */
static void parse_vxlan(struct rocemu_eth_frame *f, uint32_t off, uint32_t end)
{
	const uint8_t *vx = f->data + off;

	if (end - off < VXLAN_HLEN || !(vx[0] & VXLAN_FLAG_I))
		return;
	f->vxlan = true;
	f->vni = (uint32_t)vx[4] << 16 | (uint32_t)vx[5] << 8 | vx[6];
	f->inner_off = (uint16_t)(off + VXLAN_HLEN);
}

/*
 * The L4 header at f->l4_off of an IP payload that ends at end, or is cut
 * there when its IP length claims more than the frame holds: a ConnectX
 * still steers by its ports (rdma-core's flow tests send such IPv6), but
 * no checksum over missing bytes is right.
 */
static void parse_l4(struct rocemu_eth_frame *f, uint32_t end, bool cut)
{
	const uint32_t room = end - f->l4_off;
	struct tcphdr tcp;
	struct udphdr udp;

	if (f->ip_proto == IPPROTO_TCP && room >= sizeof(tcp)) {
		memcpy(&tcp, f->data + f->l4_off, sizeof(tcp));
		if (tcp.doff * 4u < sizeof(tcp) || tcp.doff * 4u > room)
			return;
		f->l4 = ROCEMU_ETH_L4_TCP;
		f->sport = ntohs(tcp.source);
		f->dport = ntohs(tcp.dest);
		f->tcp_flags = f->data[f->l4_off + TCP_FLAGS_OFF];
	} else if (f->ip_proto == IPPROTO_UDP && room >= sizeof(udp)) {
		memcpy(&udp, f->data + f->l4_off, sizeof(udp));
		if (ntohs(udp.len) < sizeof(udp) || ntohs(udp.len) > room)
			return;
		f->l4 = ROCEMU_ETH_L4_UDP;
		f->sport = ntohs(udp.source);
		f->dport = ntohs(udp.dest);
		if (f->dport == ROCEMU_VXLAN_PORT && !f->fragment)
			parse_vxlan(f, f->l4_off + sizeof(udp), f->l4_off + ntohs(udp.len));
	} else {
		return;
	}
	/* A fragment's checksum covers bytes of other fragments. */
	f->l4_cut = cut;
	f->l4_csum_ok = !cut && !f->fragment && rocemu_csum_l4_ok(f);
}

/* The IPv4 header at f->l3_off; an IHL or total length below it that lies stops the parse. */
static void parse_ipv4(struct rocemu_eth_frame *f)
{
	const uint32_t room = f->len - f->l3_off;
	struct iphdr ip;
	uint16_t frag;

	if (room < sizeof(ip))
		return;
	memcpy(&ip, f->data + f->l3_off, sizeof(ip));
	if (ip.version != 4 || ip.ihl * 4u < sizeof(ip) || ip.ihl * 4u > room)
		return;
	f->l3 = ROCEMU_ETH_L3_IPV4;
	f->l3_len = (uint16_t)(ip.ihl * 4);
	f->ip_proto = ip.protocol;
	f->tos = ip.tos;
	f->ttl = ip.ttl;
	memcpy(f->saddr, &ip.saddr, 4);
	memcpy(f->daddr, &ip.daddr, 4);
	frag = ntohs(ip.frag_off);
	f->fragment = frag & (IP_MF | IP_OFFMASK);
	f->l3_csum_ok = !rocemu_csum_fold(rocemu_csum_add(0, f->data + f->l3_off, f->l3_len));
	if (ntohs(ip.tot_len) < f->l3_len || (frag & IP_OFFMASK))
		return;
	f->l4_off = (uint16_t)(f->l3_off + f->l3_len);
	if (ntohs(ip.tot_len) > room)
		parse_l4(f, f->len, true);
	else
		parse_l4(f, f->l3_off + ntohs(ip.tot_len), false);
}

/* The IPv6 header at f->l3_off. */
static void parse_ipv6(struct rocemu_eth_frame *f)
{
	const uint32_t room = f->len - f->l3_off;
	struct ip6_hdr ip6;
	uint32_t flow;

	if (room < sizeof(ip6))
		return;
	memcpy(&ip6, f->data + f->l3_off, sizeof(ip6));
	flow = ntohl(ip6.ip6_flow);
	if (flow >> 28 != 6)
		return;
	f->l3 = ROCEMU_ETH_L3_IPV6;
	f->l3_len = sizeof(ip6);
	f->ip_proto = ip6.ip6_nxt;
	f->tos = (uint8_t)(flow >> 20);
	f->ttl = ip6.ip6_hlim;
	f->flow_label = flow & 0xfffff;
	memcpy(f->saddr, &ip6.ip6_src, 16);
	memcpy(f->daddr, &ip6.ip6_dst, 16);
	f->l3_csum_ok = true;
	f->l4_off = (uint16_t)(f->l3_off + sizeof(ip6));
	if (ntohs(ip6.ip6_plen) > room - sizeof(ip6))
		parse_l4(f, f->len, true);
	else
		parse_l4(f, f->l4_off + ntohs(ip6.ip6_plen), false);
}

bool rocemu_eth_parse(struct rocemu_eth_frame *f, const uint8_t *frame, uint32_t len)
{
	if (len < ROCEMU_ETH_HLEN)
		return false;
	/* Offsets are 16 bits: a frame longer than that is parsed over its first 64 KiB. */
	if (len > UINT16_MAX)
		len = UINT16_MAX;
	*f = (struct rocemu_eth_frame){ .data = frame, .len = len };
	memcpy(f->dmac, frame, ROCEMU_ETH_ALEN);
	memcpy(f->smac, frame + ROCEMU_ETH_ALEN, ROCEMU_ETH_ALEN);
	f->ethertype = get_be16(frame + 2 * ROCEMU_ETH_ALEN);
	f->l3_off = ROCEMU_ETH_HLEN;
	if (f->ethertype == ETH_P_8021Q) {
		if (len < ROCEMU_ETH_HLEN + ROCEMU_VLAN_HLEN)
			return true;
		f->vlan = true;
		f->vlan_tci = get_be16(frame + ROCEMU_ETH_HLEN);
		f->ethertype = get_be16(frame + ROCEMU_ETH_HLEN + 2);
		f->l3_off += ROCEMU_VLAN_HLEN;
	}
	if (f->ethertype == ETH_P_IP)
		parse_ipv4(f);
	else if (f->ethertype == ETH_P_IPV6)
		parse_ipv6(f);
	return true;
}
