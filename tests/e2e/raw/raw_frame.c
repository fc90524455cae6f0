/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "tests/e2e/raw/raw_frame.h"

#include <string.h>
#include <arpa/inet.h>

#include "tests/e2e/harness/verbs_pair.h"

uint32_t csum_add(uint32_t sum, const void *p, size_t len)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(b[i] << 8 | b[i + 1]);
	if (len & 1)
		sum += (uint32_t)b[len - 1] << 8;
	return sum;
}

uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return htons((uint16_t)~sum);
}

uint32_t csum_pseudo(const frame_iphdr *ip, size_t len)
{
	uint32_t sum = csum_add(0, &ip->saddr, 8);

	return sum + ip->protocol + (uint32_t)len;
}

size_t l4_header_len(uint8_t proto)
{
	return proto == IPPROTO_TCP ? sizeof(frame_tcphdr) : sizeof(frame_udphdr);
}

frame_iphdr *frame_ip(uint8_t *f, size_t len)
{
	frame_iphdr *ip = (frame_iphdr *)(f + ETH_HLEN);

	if (len < ETH_HLEN + sizeof(*ip) || len < ETH_HLEN + ip->ihl * 4u)
		return NULL;
	return ip;
}

void *frame_l4(uint8_t *f, size_t len)
{
	frame_iphdr *ip = frame_ip(f, len);

	if (!ip || len < ETH_HLEN + ip->ihl * 4u + l4_header_len(ip->protocol))
		return NULL;
	return f + ETH_HLEN + ip->ihl * 4;
}

/* The L4 checksum field of a frame's segment. */
static uint16_t *l4_csum_field(uint8_t *f, size_t len)
{
	frame_iphdr *ip = frame_ip(f, len);
	void *l4 = frame_l4(f, len);

	if (!l4)
		return NULL;
	return ip->protocol == IPPROTO_TCP ? &((frame_tcphdr *)l4)->check : &((frame_udphdr *)l4)->check;
}

uint16_t l4_csum(const frame_iphdr *ip, const void *l4, size_t len)
{
	uint16_t sum = csum_fold(csum_add(csum_pseudo(ip, len), l4, len));

	/* UDP sends a computed 0 as 0xffff: 0 there means "no checksum". */
	return ip->protocol == IPPROTO_UDP && sum == 0 ? 0xffff : sum;
}

size_t frame_build(uint8_t *out, const struct frame_desc *d)
{
	struct ethhdr *eth = (struct ethhdr *)out;
	frame_iphdr *ip = (frame_iphdr *)(out + ETH_HLEN);
	uint8_t *l4 = out + ETH_HLEN + sizeof(*ip);
	size_t l4_len = l4_header_len(d->proto) + d->payload;

	memcpy(eth->h_dest, d->dst, ETH_ALEN);
	memcpy(eth->h_source, d->src, ETH_ALEN);
	eth->h_proto = htons(ETH_P_IP);
	memset(ip, 0, sizeof(*ip));
	ip->version = 4;
	ip->ihl = 5;
	ip->tot_len = htons((uint16_t)(sizeof(*ip) + l4_len));
	ip->id = htons(d->ip_id);
	ip->frag_off = htons(IP_DF);
	ip->ttl = 64;
	ip->protocol = d->proto;
	ip->saddr = d->saddr;
	ip->daddr = d->daddr;
	ip->check = csum_fold(csum_add(0, ip, sizeof(*ip)));
	if (d->proto == IPPROTO_TCP) {
		frame_tcphdr *th = (frame_tcphdr *)l4;

		memset(th, 0, sizeof(*th));
		th->th_sport = htons(d->sport);
		th->th_dport = htons(d->dport);
		th->th_seq = htonl(d->seq);
		th->th_off = 5;
		th->th_flags = d->tcp_flags;
		th->th_win = htons(65535);
	} else {
		frame_udphdr *uh = (frame_udphdr *)l4;

		uh->uh_sport = htons(d->sport);
		uh->uh_dport = htons(d->dport);
		uh->uh_ulen = htons((uint16_t)l4_len);
		uh->uh_sum = 0;
	}
	fill_pattern(l4 + l4_header_len(d->proto), d->payload, d->seed, 0);
	*l4_csum_field(out, ETH_HLEN + sizeof(*ip) + l4_len) = l4_csum(ip, l4, l4_len);
	return ETH_HLEN + sizeof(*ip) + l4_len;
}
