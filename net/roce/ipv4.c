/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* IPv4 and UDP headers of RoCEv2 datagrams (see ipv4.h). */
#include <netinet/in.h>
#include <netinet/udp.h>
#include <string.h>

#include "net/roce/icrc.h"
#include "net/roce/ipv4.h"

/*
 * RFC 1071 sum of buf (which starts at an even offset of the summed data)
 * in 32-bit words of host order, folded and inverted by csum_finish(): the
 * one's complement sum does not depend on byte order or word width.
 */
static uint64_t csum_add(uint64_t sum, const uint8_t *buf, size_t len)
{
	uint32_t word;
	uint16_t half = 0;

	for (; len >= 4; buf += 4, len -= 4) {
		memcpy(&word, buf, 4);
		sum += word;
	}
	if (len >= 2) {
		memcpy(&half, buf, 2);
		sum += half;
		buf += 2;
		len -= 2;
	}
	if (len) {
		half = 0;
		memcpy(&half, buf, 1);
		sum += half;
	}
	return sum;
}

/* Network-order checksum of a sum. */
static uint16_t csum_finish(uint64_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

void rocemu_ipv4_header(struct iphdr *ip, const struct rocemu_ipv4_udp *flow,
			const struct rocemu_ipv4_fields *f, size_t len)
{
	*ip = (struct iphdr){
		.version = 4, .ihl = sizeof(struct iphdr) / 4, .tos = f->tos,
		.tot_len = htons((uint16_t)(sizeof(struct iphdr) + sizeof(struct udphdr) + len)),
		.id = htons(f->id), .frag_off = f->df ? htons(IP_DF) : 0, .ttl = f->ttl,
		.protocol = IPPROTO_UDP, .saddr = flow->saddr, .daddr = flow->daddr,
	};
	ip->check = csum_finish(csum_add(0, (const uint8_t *)ip, sizeof(*ip)));
}

uint16_t rocemu_udp_checksum(const struct rocemu_ipv4_udp *flow, const void *udp,
			     const uint8_t *payload, size_t len)
{
	uint16_t udp_len = (uint16_t)(sizeof(struct udphdr) + len), sum;
	struct udphdr hdr;
	uint8_t pseudo[12];

	memcpy(&hdr, udp, sizeof(hdr));
	hdr.check = 0;
	memcpy(&pseudo[0], &flow->saddr, 4);
	memcpy(&pseudo[4], &flow->daddr, 4);
	pseudo[8] = 0;
	pseudo[9] = IPPROTO_UDP;
	pseudo[10] = (uint8_t)(udp_len >> 8);
	pseudo[11] = (uint8_t)udp_len;
	sum = csum_finish(csum_add(csum_add(csum_add(0, pseudo, sizeof(pseudo)),
					    (const uint8_t *)&hdr, sizeof(hdr)), payload, len));
	return sum ? sum : 0xffff;
}
