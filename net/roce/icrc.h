/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* CRC-32 and the RoCEv2 invariant CRC (IBTA Annex A17, roce-wire.md). */
#ifndef ROCEMU_NET_ICRC_H
#define ROCEMU_NET_ICRC_H

#include <netinet/ip.h>
#include <netinet/udp.h>
#include <stddef.h>
#include <stdint.h>

#include "net/roce/ipv4.h"

/* The 4-tuple of a RoCEv2 datagram over IPv4, all in network byte order
 * (as in struct sockaddr_in). The ICRC covers these fields. */
struct rocemu_ipv4_udp {
	uint32_t saddr;
	uint32_t daddr;
	uint16_t sport;
	uint16_t dport;
};

/*
 * CRC-32 (reflected polynomial 0xEDB88320, initial and final inversion) of
 * len bytes at buf, continuing from crc: same values as zlib's crc32(), so
 * start with 0 and chain calls over consecutive pieces.
 */
uint32_t rocemu_crc32(uint32_t crc, const void *buf, size_t len);

/* The same CRC-32 with the portable slice-by-16 tables only, whatever the
 * CPU offers: the reference the faster paths are tested against. */
uint32_t rocemu_crc32_table(uint32_t crc, const void *buf, size_t len);

/*
 * ICRC of a RoCEv2 packet sent over IPv4: pkt is the UDP payload from the
 * BTH to the end of the pad, len its size (at least ROCEMU_BTH_BYTES;
 * the ICRC itself excluded). It covers the IPv4 and UDP headers of flow
 * with ID 0 and DF (protocol 17, lengths for len + 4 bytes) with TOS, TTL
 * and checksums masked, and the BTH with its F/B/reserved byte masked.
 * Returns the CRC value; it goes on the wire least-significant byte first.
 */
uint32_t rocemu_icrc_v4(const struct rocemu_ipv4_udp *flow, const uint8_t *pkt, size_t len);

/*
 * ICRC of a packet whose IPv4 and UDP headers are known, e.g. from a
 * capture: ip and udp as on the wire (TOS, TTL and checksums are masked
 * here; IP options, which RoCEv2 does not use, are not covered); pkt and
 * len as for rocemu_icrc_v4(). Returns the CRC value.
 */
uint32_t rocemu_icrc_v4_hdrs(const struct iphdr *ip, const struct udphdr *udp,
			     const uint8_t *pkt, size_t len);

/*
 * Checks the ICRC of a packet of len bytes (BTH to ICRC included) whose
 * IPv4 and UDP headers are known, e.g. from a capture. Returns 0 when it
 * matches, -EINVAL when len cannot hold a BTH and an ICRC, -EBADMSG when
 * it does not match.
 */
int rocemu_icrc_check_v4_hdrs(const struct iphdr *ip, const struct udphdr *udp,
			      const uint8_t *pkt, size_t len);

/*
 * Writes the ICRC of pkt[0, len) at pkt + len (4 bytes, which the caller
 * provides) for the IPv4 header the kernel will write: ID ip_id
 * (rocemu_ipv4_send_id of the packet's place in its send) and DF.
 * Returns the packet length with the ICRC, len + 4.
 */
size_t rocemu_icrc_append_v4(const struct rocemu_ipv4_udp *flow, uint8_t *pkt, size_t len,
			     uint16_t ip_id);

/*
 * Rewrites the ICRC of the packet pkt[0, len) (ICRC included) made for IPv4
 * ID from into the one for ID to, whatever else it covers: a packet that
 * leaves in another place of a send than it was made for. The ICRC is
 * affine in the ID, so a damaged packet stays exactly as damaged.
 */
void rocemu_icrc_move_id(uint8_t *pkt, size_t len, uint16_t from, uint16_t to);

/*
 * Checks the ICRC of a received packet of len bytes (BTH to ICRC
 * included). A UDP socket does not show the IPv4 header, whose ID and
 * flags the ICRC covers and any sender may choose (rxe and ConnectX
 * write their own IDs): the ICRC is affine in the ID's 16 bits, so the
 * check finds the ID, with DF or without, that makes it match, if one
 * does; it then still holds 16 of its 32 bits against damage. Returns 0
 * when it matches, with *ip's id and df set (ip may be NULL), -EINVAL
 * when len is too short to hold a BTH and an ICRC, -EBADMSG when no ID
 * makes it match.
 */
int rocemu_icrc_check_v4(const struct rocemu_ipv4_udp *flow, const uint8_t *pkt, size_t len,
			 struct rocemu_ipv4_fields *ip);

#endif /* ROCEMU_NET_ICRC_H */
