/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Ethernet frames for the net/eth suites (see eth_build.h). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#include "eth_build.h"

static const uint8_t dmac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x02 };
static const uint8_t smac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };

static void put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

size_t build_eth(uint8_t *p, int vlan_tci, uint16_t ethertype)
{
	memcpy(p, dmac, 6);
	memcpy(p + 6, smac, 6);
	if (vlan_tci == BUILD_NO_VLAN) {
		put16(p + 12, ethertype);
		return 14;
	}
	put16(p + 12, 0x8100);
	put16(p + 14, (uint32_t)vlan_tci);
	put16(p + 16, ethertype);
	return 18;
}

uint16_t ref_csum(const uint8_t *p, size_t len, uint32_t sum)
{
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

size_t build_ipv4(uint8_t *p, unsigned int ihl, uint8_t proto, uint16_t tot_len, uint16_t id,
		  uint16_t frag, const char *src, const char *dst)
{
	memset(p, 1, ihl * 4);	/* options: NOPs */
	p[0] = (uint8_t)(0x40 | ihl);
	p[1] = 0;
	put16(p + 2, tot_len);
	put16(p + 4, id);
	put16(p + 6, frag);
	p[8] = 64;
	p[9] = proto;
	put16(p + 10, 0);
	inet_pton(AF_INET, src, p + 12);
	inet_pton(AF_INET, dst, p + 16);
	put16(p + 10, ref_csum(p, ihl * 4, 0));
	return ihl * 4;
}

size_t build_ipv6(uint8_t *p, uint8_t nxt, uint16_t plen, uint8_t tclass, uint32_t flow,
		  const char *src, const char *dst)
{
	const uint32_t word = 6u << 28 | (uint32_t)tclass << 20 | (flow & 0xfffff);

	put16(p, word >> 16);
	put16(p + 2, word & 0xffff);
	put16(p + 4, plen);
	p[6] = nxt;
	p[7] = 64;
	inet_pton(AF_INET6, src, p + 8);
	inet_pton(AF_INET6, dst, p + 24);
	return 40;
}

size_t build_udp(uint8_t *p, uint16_t sport, uint16_t dport, uint16_t len)
{
	put16(p, sport);
	put16(p + 2, dport);
	put16(p + 4, len);
	put16(p + 6, 0);
	return 8;
}

size_t build_tcp(uint8_t *p, uint16_t sport, uint16_t dport, uint32_t seq, uint8_t flags,
		 unsigned int doff)
{
	memset(p, 1, doff * 4);
	put16(p, sport);
	put16(p + 2, dport);
	put16(p + 4, seq >> 16);
	put16(p + 6, seq & 0xffff);
	put16(p + 8, 0x1234);	/* ack */
	put16(p + 10, 0x5678);
	p[12] = (uint8_t)(doff << 4);
	p[13] = flags;
	put16(p + 14, 0xffff);	/* window */
	put16(p + 16, 0);
	put16(p + 18, 0);
	return doff * 4;
}

uint32_t ref_pseudo(const uint8_t *ip, uint8_t proto, uint32_t len)
{
	const bool v6 = (ip[0] >> 4) == 6;
	const uint8_t *addrs = ip + (v6 ? 8 : 12);
	const size_t alen = v6 ? 32 : 8;
	uint32_t sum = proto + (len >> 16) + (len & 0xffff);
	size_t i;

	for (i = 0; i < alen; i += 2)
		sum += (uint32_t)addrs[i] << 8 | addrs[i + 1];
	return sum;
}

void ref_l4_csum(const uint8_t *ip, uint8_t *l4, uint8_t proto, uint32_t len)
{
	uint8_t *field = l4 + (proto == IPPROTO_TCP ? 16 : 6);
	uint16_t sum;

	put16(field, 0);
	sum = ref_csum(l4, len, ref_pseudo(ip, proto, len));
	put16(field, proto == IPPROTO_UDP && !sum ? 0xffff : sum);
}
