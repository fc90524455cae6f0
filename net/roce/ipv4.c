/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* IPv4 and UDP headers of RoCEv2 datagrams (see ipv4.h). */
#include <netinet/in.h>
#include <netinet/udp.h>
#include <string.h>

#include "net/eth/inet_csum.h"
#include "net/roce/icrc.h"
#include "net/roce/ipv4.h"

void rocemu_ipv4_header(struct iphdr *ip, const struct rocemu_ipv4_udp *flow,
			const struct rocemu_ipv4_fields *f, size_t len)
{
	*ip = (struct iphdr){
		.version = 4, .ihl = sizeof(struct iphdr) / 4, .tos = f->tos,
		.tot_len = htons((uint16_t)(sizeof(struct iphdr) + sizeof(struct udphdr) + len)),
		.id = htons(f->id), .frag_off = f->df ? htons(IP_DF) : 0, .ttl = f->ttl,
		.protocol = IPPROTO_UDP, .saddr = flow->saddr, .daddr = flow->daddr,
	};
	ip->check = rocemu_csum_fold(rocemu_csum_add(0, ip, sizeof(*ip)));
}

uint16_t rocemu_udp_checksum(const struct rocemu_ipv4_udp *flow, const void *udp,
			     const uint8_t *payload, size_t len)
{
	uint16_t udp_len = (uint16_t)(sizeof(struct udphdr) + len), check;
	struct udphdr hdr;
	uint8_t pseudo[12];
	uint64_t sum;

	memcpy(&hdr, udp, sizeof(hdr));
	hdr.check = 0;
	memcpy(&pseudo[0], &flow->saddr, 4);
	memcpy(&pseudo[4], &flow->daddr, 4);
	pseudo[8] = 0;
	pseudo[9] = IPPROTO_UDP;
	pseudo[10] = (uint8_t)(udp_len >> 8);
	pseudo[11] = (uint8_t)udp_len;
	sum = rocemu_csum_add(0, pseudo, sizeof(pseudo));
	sum = rocemu_csum_add(sum, &hdr, sizeof(hdr));
	check = rocemu_csum_fold(rocemu_csum_add(sum, payload, len));
	return check ? check : 0xffff;
}
