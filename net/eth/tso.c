/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* TCP segmentation offload (see tso.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/ip.h>
#include <netinet/ip6.h>
#include <netinet/tcp.h>
#include <stddef.h>
#include <string.h>

#include "net/eth/eth_frame.h"
#include "net/eth/inet_csum.h"
#include "net/eth/tso.h"

#define TCP_FLAGS_OFF 13	/* CWR ... FIN, the byte after the data offset */
#define TCP_FLAG_FIN 0x01
#define TCP_FLAG_PSH 0x08
#define TCP_FLAG_CWR 0x80

static void put_be16(uint8_t *p, uint32_t v)
{
	const uint16_t be = htons((uint16_t)v);

	memcpy(p, &be, sizeof(be));
}

static uint16_t get_be16(const uint8_t *p)
{
	uint16_t be;

	memcpy(&be, p, sizeof(be));
	return ntohs(be);
}

static uint32_t get_be32(const uint8_t *p)
{
	uint32_t be;

	memcpy(&be, p, sizeof(be));
	return ntohl(be);
}

static void put_be32(uint8_t *p, uint32_t v)
{
	const uint32_t be = htonl(v);

	memcpy(p, &be, sizeof(be));
}

/* Set the IP length fields in frame (IP header at l3_off) for len bytes of L4 segment. */
static void set_ip_len(uint8_t *frame, const struct rocemu_eth_frame *f, uint32_t len)
{
	uint8_t *ip = frame + f->l3_off;

	if (f->l3 == ROCEMU_ETH_L3_IPV4)
		put_be16(ip + offsetof(struct iphdr, tot_len), f->l3_len + len);
	else
		put_be16(ip + offsetof(struct ip6_hdr, ip6_plen), len);
}

/*
 * Check the headers in frame as those of a segment of n payload bytes and
 * parse them into f: whether they are Ethernet/IP/TCP ending at hdr_len.
 */
static bool parse_headers(struct rocemu_eth_frame *f, uint8_t *frame, uint32_t hdr_len, uint32_t n)
{
	struct rocemu_eth_frame outer;
	struct tcphdr tcp;

	/* The IP header's lengths are the whole send's: set them for this segment first. */
	if (!rocemu_eth_parse(&outer, frame, hdr_len) || outer.l3 == ROCEMU_ETH_L3_NONE ||
	    outer.l3_off + outer.l3_len + sizeof(struct tcphdr) > hdr_len)
		return false;
	set_ip_len(frame, &outer, hdr_len - outer.l3_off - outer.l3_len + n);
	if (!rocemu_eth_parse(f, frame, hdr_len + n) || f->l4 != ROCEMU_ETH_L4_TCP || f->fragment)
		return false;
	memcpy(&tcp, frame + f->l4_off, sizeof(tcp));
	return f->l4_off + tcp.doff * 4u == hdr_len;
}

int rocemu_tso(const uint8_t *hdr, uint32_t hdr_len, uint32_t payload_len, uint16_t mss,
	       uint8_t *frame, uint32_t frame_size, const struct rocemu_tso_io *io)
{
	const uint32_t first_n = payload_len < mss ? payload_len : mss;
	uint32_t off = 0, seq, tcp_len, n;
	struct rocemu_eth_frame f;
	uint8_t flags, *tcp;
	uint16_t id = 0;
	int err;

	if (!mss || hdr_len > frame_size || frame_size - hdr_len < first_n)
		return -EINVAL;
	memcpy(frame, hdr, hdr_len);
	if (!parse_headers(&f, frame, hdr_len, first_n))
		return -EINVAL;
	tcp = frame + f.l4_off;
	tcp_len = hdr_len - f.l4_off;
	seq = get_be32(tcp + offsetof(struct tcphdr, seq));
	flags = tcp[TCP_FLAGS_OFF];
	if (f.l3 == ROCEMU_ETH_L3_IPV4)
		id = get_be16(frame + f.l3_off + offsetof(struct iphdr, id));
	do {
		n = payload_len - off < mss ? payload_len - off : mss;
		set_ip_len(frame, &f, tcp_len + n);
		if (f.l3 == ROCEMU_ETH_L3_IPV4)
			put_be16(frame + f.l3_off + offsetof(struct iphdr, id), id++);
		put_be32(tcp + offsetof(struct tcphdr, seq), seq + off);
		tcp[TCP_FLAGS_OFF] = flags;
		if (off)
			tcp[TCP_FLAGS_OFF] &= (uint8_t)~TCP_FLAG_CWR;
		if (off + n < payload_len)
			tcp[TCP_FLAGS_OFF] &= (uint8_t)~(TCP_FLAG_FIN | TCP_FLAG_PSH);
		err = n ? io->gather(io->arg, off, frame + hdr_len, n) : 0;
		if (err)
			return err;
		rocemu_csum_fill(frame, &f, true, true);
		err = io->emit(io->arg, frame, hdr_len + n);
		if (err)
			return err;
		off += n;
	} while (off < payload_len);
	return 0;
}
