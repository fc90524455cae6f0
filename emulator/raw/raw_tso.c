/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * TSO as a ConnectX does it (MLX5_OPCODE_TSO): the WQE's inline header is
 * an Ethernet, IPv4 or IPv6 and TCP header, its data the payload; each
 * frame is the header with the next mss bytes, its IP length its own,
 * IPv4 IDs counting up from the header's, the TCP sequence advanced by
 * the payload before it, FIN and PSH on the last frame only, CWR on the
 * first only, and both checksums filled. The header's own IP length is
 * not read: the device writes each frame's.
 */
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <netinet/ip.h>
#include <netinet/ip6.h>
#include <netinet/tcp.h>
#include <string.h>

#include "emulator/obj/qp.h"
#include "emulator/raw/raw.h"
#include "emulator/ring/format.h"
#include "net/eth/eth_frame.h"

/* The TCP flags only the last frame keeps, and the one only the first does. */
#define TSO_LAST_FLAGS (TH_FIN | TH_PUSH)
#define TSO_FIRST_FLAGS 0x80	/* CWR, which <netinet/tcp.h> does not name */
#define TCP_FLAGS_OFFSET 13

/* Where the IP and TCP headers of a TSO header lie. */
struct tso_hdr {
	bool ipv4;
	uint32_t l3_off, l4_off;
};

/* One frame of a TSO is built here: a header and at most a 64 KiB mss, or Ethernet's least. */
static uint8_t seg[ROCEMU_RAW_MAX_TSO_HEADER + UINT16_MAX + ETH_ZLEN];

/*
 * The IP and TCP headers of a TSO header of hdr bytes at msg: IPv4 (not a
 * fragment) or IPv6 (no extension header), then TCP, which ends the header.
 */
static bool tso_hdr_parse(const uint8_t *msg, uint32_t hdr, struct tso_hdr *t)
{
	struct rocemu_eth_frame f;
	struct tcphdr tcp;

	if (!rocemu_eth_parse(&f, msg, hdr) || f.l3 == ROCEMU_ETH_L3_NONE || f.fragment ||
	    f.ip_proto != IPPROTO_TCP)
		return false;
	t->ipv4 = f.l3 == ROCEMU_ETH_L3_IPV4;
	t->l3_off = f.l3_off;
	t->l4_off = f.l3_off + f.l3_len;
	if (t->l4_off + sizeof(tcp) > hdr)
		return false;
	memcpy(&tcp, msg + t->l4_off, sizeof(tcp));
	return t->l4_off + tcp.doff * 4u == hdr;
}

/* The IP and TCP fields of frame number index, of len bytes, whose payload is the message's from off. */
static void seg_fix(uint8_t *frame, const struct tso_hdr *t, uint32_t len, uint32_t off,
		    uint32_t index, bool last)
{
	struct tcphdr tcp;
	uint8_t *flags = frame + t->l4_off + TCP_FLAGS_OFFSET;

	if (t->ipv4) {
		struct iphdr ip;

		memcpy(&ip, frame + t->l3_off, sizeof(ip));
		ip.tot_len = htons((uint16_t)(len - t->l3_off));
		ip.id = htons((uint16_t)(ntohs(ip.id) + index));
		memcpy(frame + t->l3_off, &ip, sizeof(ip));
	} else {
		struct ip6_hdr ip6;

		memcpy(&ip6, frame + t->l3_off, sizeof(ip6));
		ip6.ip6_plen = htons((uint16_t)(len - t->l3_off - sizeof(ip6)));
		memcpy(frame + t->l3_off, &ip6, sizeof(ip6));
	}
	memcpy(&tcp, frame + t->l4_off, sizeof(tcp));
	tcp.seq = htonl(ntohl(tcp.seq) + off);
	memcpy(frame + t->l4_off, &tcp, sizeof(tcp));
	if (!last)
		*flags &= (uint8_t)~TSO_LAST_FLAGS;
	if (index)
		*flags &= (uint8_t)~TSO_FIRST_FLAGS;
}

enum ibv_wc_status rocemu_raw_tso_out(struct rocemu_qp *qp, const struct rocemu_send_wqe *w,
				      uint8_t *msg, uint32_t len)
{
	uint32_t hdr = w->eth.hdr_len, mss = w->eth.mss, payload = len - hdr, off = 0, index = 0;
	struct tso_hdr t;

	if (!tso_hdr_parse(msg, hdr, &t))
		return IBV_WC_LOC_QP_OP_ERR;
	if (hdr + mss > rocemu_raw_frame_max(qp->owner->dev))
		return IBV_WC_LOC_LEN_ERR;
	do {
		uint32_t n = payload - off < mss ? payload - off : mss;

		memcpy(seg, msg, hdr);
		memcpy(seg + hdr, msg + hdr + off, n);
		seg_fix(seg, &t, hdr + n, off, index++, off + n == payload);
		rocemu_raw_frame_out(qp, seg, hdr + n, true, true);
		off += n;
	} while (off < payload);
	return IBV_WC_SUCCESS;
}
