/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Slice-by-16 CRC-32 and the RoCEv2 ICRC over the masked pseudo header. */
#include <endian.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <string.h>

#include "net/icrc.h"
#include "net/roce_opcode.h"

#define CRC32_POLY_REFLECTED 0xedb88320u

/* Slice-by-16: crc_table[0] is the byte-at-a-time table; crc_table[k][b]
 * is the CRC of byte b followed by k zero bytes, so 16 independent lookups
 * consume 16 bytes (16 KiB of tables, in L1). */
#define SLICES 16
static uint32_t crc_table[SLICES][256];

__attribute__((constructor, cold)) static void crc_table_init(void)
{
	for (uint32_t b = 0; b < 256; b++) {
		uint32_t c = b;

		for (int bit = 0; bit < 8; bit++)
			c = (c >> 1) ^ (CRC32_POLY_REFLECTED & -(c & 1));
		crc_table[0][b] = c;
	}
	for (int k = 1; k < SLICES; k++)
		for (int b = 0; b < 256; b++) {
			uint32_t prev = crc_table[k - 1][b];

			crc_table[k][b] = (prev >> 8) ^ crc_table[0][prev & 0xff];
		}
}

/* The register without the initial and final inversions. */
static uint32_t crc32_update(uint32_t crc, const uint8_t *p, size_t len)
{
	for (; len >= SLICES; len -= SLICES, p += SLICES) {
		uint64_t lo, hi;

		memcpy(&lo, p, sizeof(lo));
		memcpy(&hi, p + 8, sizeof(hi));
		lo = le64toh(lo) ^ crc;
		hi = le64toh(hi);
		crc = crc_table[15][lo & 0xff] ^ crc_table[14][(lo >> 8) & 0xff] ^
		      crc_table[13][(lo >> 16) & 0xff] ^ crc_table[12][(lo >> 24) & 0xff] ^
		      crc_table[11][(lo >> 32) & 0xff] ^ crc_table[10][(lo >> 40) & 0xff] ^
		      crc_table[9][(lo >> 48) & 0xff] ^ crc_table[8][lo >> 56] ^
		      crc_table[7][hi & 0xff] ^ crc_table[6][(hi >> 8) & 0xff] ^
		      crc_table[5][(hi >> 16) & 0xff] ^ crc_table[4][(hi >> 24) & 0xff] ^
		      crc_table[3][(hi >> 32) & 0xff] ^ crc_table[2][(hi >> 40) & 0xff] ^
		      crc_table[1][(hi >> 48) & 0xff] ^ crc_table[0][hi >> 56];
	}
	for (; len; len--)
		crc = (crc >> 8) ^ crc_table[0][(crc ^ *p++) & 0xff];
	return crc;
}

uint32_t rocemu_crc32(uint32_t crc, const void *buf, size_t len)
{
	return ~crc32_update(~crc, buf, len);
}

/* What the ICRC covers before the BTH's extension headers, masked. */
struct icrc_pseudo_v4 {
	uint8_t lrh[8];			/* the absent IB LRH: all 1s */
	struct iphdr ip;
	struct udphdr udp;
	uint8_t bth[ROCEMU_BTH_BYTES];
} __attribute__((packed));

_Static_assert(sizeof(struct icrc_pseudo_v4) == 48, "pseudo header layout");

#define BTH_FECN_BECN_BYTE 4	/* F, B and 6 reserved bits: masked */

uint32_t rocemu_icrc_v4_hdrs(const struct iphdr *ip, const struct udphdr *udp,
			     const uint8_t *pkt, size_t len)
{
	struct icrc_pseudo_v4 ph;
	uint32_t crc;

	memset(ph.lrh, 0xff, sizeof(ph.lrh));
	ph.ip = *ip;
	ph.ip.tos = 0xff;
	ph.ip.ttl = 0xff;
	ph.ip.check = 0xffff;
	ph.udp = *udp;
	ph.udp.check = 0xffff;
	memcpy(ph.bth, pkt, ROCEMU_BTH_BYTES);
	ph.bth[BTH_FECN_BECN_BYTE] = 0xff;

	crc = crc32_update(~0u, (const uint8_t *)&ph, sizeof(ph));
	crc = crc32_update(crc, pkt + ROCEMU_BTH_BYTES, len - ROCEMU_BTH_BYTES);
	return ~crc;
}

/* The headers Linux writes for a datagram from an unconnected UDP socket
 * with IP_PMTUDISC_DO: ID 0 and DF. TOS and TTL do not matter (masked). */
uint32_t rocemu_icrc_v4(const struct rocemu_ipv4_udp *flow, const uint8_t *pkt, size_t len)
{
	uint16_t udp_len = (uint16_t)(sizeof(struct udphdr) + len + ROCEMU_ICRC_BYTES);
	const struct iphdr ip = {
		.version = 4,
		.ihl = sizeof(struct iphdr) / 4,
		.tot_len = htons((uint16_t)(sizeof(struct iphdr) + udp_len)),
		.id = 0,
		.frag_off = htons(IP_DF),
		.protocol = IPPROTO_UDP,
		.saddr = flow->saddr,
		.daddr = flow->daddr,
	};
	const struct udphdr udp = {
		.source = flow->sport,
		.dest = flow->dport,
		.len = htons(udp_len),
	};

	return rocemu_icrc_v4_hdrs(&ip, &udp, pkt, len);
}

size_t rocemu_icrc_append_v4(const struct rocemu_ipv4_udp *flow, uint8_t *pkt, size_t len)
{
	uint32_t icrc = htole32(rocemu_icrc_v4(flow, pkt, len));

	memcpy(pkt + len, &icrc, sizeof(icrc));
	return len + ROCEMU_ICRC_BYTES;
}

int rocemu_icrc_check_v4(const struct rocemu_ipv4_udp *flow, const uint8_t *pkt, size_t len)
{
	uint32_t wire;

	if (len < ROCEMU_BTH_BYTES + ROCEMU_ICRC_BYTES)
		return -EINVAL;
	len -= ROCEMU_ICRC_BYTES;
	memcpy(&wire, pkt + len, sizeof(wire));
	return le32toh(wire) == rocemu_icrc_v4(flow, pkt, len) ? 0 : -EBADMSG;
}
