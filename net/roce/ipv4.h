/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The IPv4 and UDP headers around a RoCEv2 datagram as they are on the
 * wire: what the kernel writes for the daemon's sockets, or what a
 * receiver learns of a peer's (roce-wire.md). A capture shows them, and a
 * UD receive finds the IPv4 header in its GRH.
 */
#ifndef ROCEMU_NET_IPV4_H
#define ROCEMU_NET_IPV4_H

#include <netinet/ip.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rocemu_ipv4_udp;

/* The fields of a datagram's IPv4 header that its flow does not give. */
struct rocemu_ipv4_fields {
	uint16_t id;		/* host order */
	bool df;		/* Don't Fragment */
	uint8_t ttl;
	uint8_t tos;
};

/* Linux's default TTLs (net.ipv4.ip_default_ttl, IP_MULTICAST_TTL), where a socket's are unknown. */
#define ROCEMU_IPV4_TTL_DEFAULT 64
#define ROCEMU_IPV4_MCAST_TTL_DEFAULT 1

/*
 * The IPv4 ID Linux gives datagram k of one send from an unconnected
 * IP_PMTUDISC_DO socket: 0 for a single datagram (DF set, no ID needed),
 * and with UDP_SEGMENT one more per segment, as inet_gso_segment counts
 * them. Every ICRC rocemu sends covers this ID.
 */
#define ROCEMU_IPV4_SEND_IDS 64	/* IDs of one send: its most segments, the kernel's UDP_MAX_SEGMENTS */

static inline uint16_t rocemu_ipv4_send_id(unsigned int k)
{
	return (uint16_t)k;
}

/*
 * The IPv4 header of a datagram of flow with len bytes of UDP payload and
 * the given fields, its checksum filled in.
 */
void rocemu_ipv4_header(struct iphdr *ip, const struct rocemu_ipv4_udp *flow,
			const struct rocemu_ipv4_fields *f, size_t len);

/*
 * The UDP checksum (network order, RFC 768: 0 sent as 0xffff) of a datagram
 * of flow whose UDP header is udp and payload payload[0, len).
 */
uint16_t rocemu_udp_checksum(const struct rocemu_ipv4_udp *flow, const void *udp,
			     const uint8_t *payload, size_t len);

#endif /* ROCEMU_NET_IPV4_H */
