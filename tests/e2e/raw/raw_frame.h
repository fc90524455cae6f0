/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Frames of the raw packet tests, built and checked by the test's own
 * model: Ethernet, IPv4, UDP or TCP headers by the system's header
 * structs, Internet checksums computed here (RFC 1071), independent of
 * the daemon's code.
 */
#ifndef ROCEMU_TESTS_E2E_RAW_FRAME_H
#define ROCEMU_TESTS_E2E_RAW_FRAME_H

#include <stddef.h>
#include <stdint.h>
#include <linux/if_ether.h>
#include <netinet/ip.h>
#include <netinet/ip6.h>
#include <netinet/tcp.h>
#include <netinet/udp.h>

#include "tests/frame_headers.h"

/* What frame_build makes; proto IPPROTO_UDP or IPPROTO_TCP. */
struct frame_desc {
	uint8_t dst[ETH_ALEN], src[ETH_ALEN];
	uint32_t saddr, daddr;		/* network order */
	uint8_t proto;
	uint16_t sport, dport;		/* host order */
	uint16_t ip_id;
	uint32_t seq;			/* TCP */
	uint8_t tcp_flags;		/* TCP, as in th_flags */
	size_t payload;			/* bytes of pattern seed after the L4 header */
	unsigned int seed;
};

/* Checksum arithmetic: a running one's-complement sum, folded at the end. */
uint32_t csum_add(uint32_t sum, const void *p, size_t len);
uint16_t csum_fold(uint32_t sum);
/* The IPv4 pseudo header of an L4 segment of len bytes. */
uint32_t csum_pseudo(const frame_iphdr *ip, size_t len);
/* The checksum an L4 segment (its own checksum field zero) carries. */
uint16_t l4_csum(const frame_iphdr *ip, const void *l4, size_t len);

size_t l4_header_len(uint8_t proto);
/* The whole frame into out (room for it assumed): its length. Checksums right. */
size_t frame_build(uint8_t *out, const struct frame_desc *d);
/* Headers of a frame: NULL when it is too short for them. */
frame_iphdr *frame_ip(uint8_t *f, size_t len);
void *frame_l4(uint8_t *f, size_t len);

#endif /* ROCEMU_TESTS_E2E_RAW_FRAME_H */
