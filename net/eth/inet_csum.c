/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The Internet checksum and the send checksum offload (see inet_csum.h). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/ip6.h>
#include <netinet/tcp.h>
#include <netinet/udp.h>
#include <string.h>

#include "net/eth/inet_csum.h"

uint64_t rocemu_csum_add(uint64_t sum, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint32_t word;
	uint16_t half = 0;

	for (; len >= 4; p += 4, len -= 4) {
		memcpy(&word, p, 4);
		sum += word;
	}
	if (len >= 2) {
		memcpy(&half, p, 2);
		sum += half;
		p += 2;
		len -= 2;
	}
	if (len) {
		/* The odd last byte is the high byte of a network-order word padded with 0. */
		half = 0;
		memcpy(&half, p, 1);
		sum += half;
	}
	return sum;
}

uint16_t rocemu_csum_fold(uint64_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

uint64_t rocemu_csum_pseudo(const struct rocemu_eth_frame *f, uint32_t len)
{
	const size_t alen = f->l3 == ROCEMU_ETH_L3_IPV4 ? 4 : 16;
	const uint32_t tail[2] = { htonl(len), htonl(f->ip_proto) };
	uint64_t sum;

	sum = rocemu_csum_add(rocemu_csum_add(0, f->saddr, alen), f->daddr, alen);
	/* IPv4's zero, protocol, 16-bit length sum as IPv6's 32-bit length, zeros, next header. */
	return rocemu_csum_add(sum, tail, sizeof(tail));
}

uint32_t rocemu_csum_l4_len(const struct rocemu_eth_frame *f)
{
	const uint8_t *l3 = f->data + f->l3_off;
	struct udphdr udp;
	uint16_t ip_len;

	if (f->l4 == ROCEMU_ETH_L4_UDP) {
		memcpy(&udp, f->data + f->l4_off, sizeof(udp));
		return ntohs(udp.len);
	}
	if (f->l3 == ROCEMU_ETH_L3_IPV4) {
		memcpy(&ip_len, l3 + offsetof(struct iphdr, tot_len), sizeof(ip_len));
		return ntohs(ip_len) - f->l3_len;
	}
	memcpy(&ip_len, l3 + offsetof(struct ip6_hdr, ip6_plen), sizeof(ip_len));
	return ntohs(ip_len);
}

/* The offset in the L4 header of its checksum field. */
static size_t l4_check_off(const struct rocemu_eth_frame *f)
{
	return f->l4 == ROCEMU_ETH_L4_TCP ? offsetof(struct tcphdr, check)
					  : offsetof(struct udphdr, check);
}

bool rocemu_csum_l4_ok(const struct rocemu_eth_frame *f)
{
	const uint32_t len = rocemu_csum_l4_len(f);
	uint16_t check;

	memcpy(&check, f->data + f->l4_off + l4_check_off(f), sizeof(check));
	/* UDP over IPv4 may go unsummed; over IPv6 a zero is invalid (RFC 8200 8.1). */
	if (f->l4 == ROCEMU_ETH_L4_UDP && !check)
		return f->l3 == ROCEMU_ETH_L3_IPV4;
	return !rocemu_csum_fold(rocemu_csum_add(rocemu_csum_pseudo(f, len),
						  f->data + f->l4_off, len));
}

void rocemu_csum_fill(uint8_t *frame, const struct rocemu_eth_frame *f, bool l3, bool l4)
{
	const uint16_t zero = 0;
	uint16_t check;
	uint32_t len;
	uint8_t *field;

	if (l3 && f->l3 == ROCEMU_ETH_L3_IPV4) {
		field = frame + f->l3_off + offsetof(struct iphdr, check);
		memcpy(field, &zero, sizeof(zero));
		check = rocemu_csum_fold(rocemu_csum_add(0, frame + f->l3_off, f->l3_len));
		memcpy(field, &check, sizeof(check));
	}
	/* A fragment's segment, or a cut one, is not whole here: its sum is the sender's. */
	if (!l4 || f->l4 == ROCEMU_ETH_L4_NONE || f->fragment || f->l4_cut)
		return;
	len = rocemu_csum_l4_len(f);
	field = frame + f->l4_off + l4_check_off(f);
	memcpy(field, &zero, sizeof(zero));
	check = rocemu_csum_fold(rocemu_csum_add(rocemu_csum_pseudo(f, len), frame + f->l4_off, len));
	if (f->l4 == ROCEMU_ETH_L4_UDP && !check)
		check = 0xffff;
	memcpy(field, &check, sizeof(check));
}
