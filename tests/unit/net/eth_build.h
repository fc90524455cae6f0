/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Ethernet frames built for the net/eth suites, their checksums computed
 * apart from net/eth/inet_csum.c: a plain sum of big-endian 16-bit words.
 * Each builder writes one header at p and returns its length.
 */
#ifndef ROCEMU_TESTS_ETH_BUILD_H
#define ROCEMU_TESTS_ETH_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/ip.h>
#include <netinet/tcp.h>

#include "tests/frame_headers.h"

#define BUILD_NO_VLAN (-1)

size_t build_eth(uint8_t *p, int vlan_tci, uint16_t ethertype);
/* An IPv4 header of ihl words (options NOPs), its checksum right; frag is the frag_off field. */
size_t build_ipv4(uint8_t *p, unsigned int ihl, uint8_t proto, uint16_t tot_len, uint16_t id,
		  uint16_t frag, const char *src, const char *dst);
size_t build_ipv6(uint8_t *p, uint8_t nxt, uint16_t plen, uint8_t tclass, uint32_t flow,
		  const char *src, const char *dst);
size_t build_udp(uint8_t *p, uint16_t sport, uint16_t dport, uint16_t len);
/* A TCP header of doff words (options NOPs), its checksum 0. */
size_t build_tcp(uint8_t *p, uint16_t sport, uint16_t dport, uint32_t seq, uint8_t flags,
		 unsigned int doff);

/* The Internet checksum of p[0, len) after sum, in host order. */
uint16_t ref_csum(const uint8_t *p, size_t len, uint32_t sum);
/* The pseudo header's sum of an IP header at ip (4 or 6 by its version) for len L4 bytes. */
uint32_t ref_pseudo(const uint8_t *ip, uint8_t proto, uint32_t len);
/* Write the checksum of the L4 segment at l4 (len bytes, under the IP header at ip). */
void ref_l4_csum(const uint8_t *ip, uint8_t *l4, uint8_t proto, uint32_t len);

#endif /* ROCEMU_TESTS_ETH_BUILD_H */
