/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The system's header structs as the tests read them inside Ethernet
 * frames: a header sits at any byte (IPv4 at 14), so each type here has
 * alignment 1, which a typedef may lower and UBSan then accepts.
 */
#ifndef ROCEMU_TESTS_FRAME_HEADERS_H
#define ROCEMU_TESTS_FRAME_HEADERS_H

#include <net/ethernet.h>
#include <netinet/if_ether.h>
#include <netinet/ip.h>
#include <netinet/ip6.h>
#include <netinet/ip_icmp.h>
#include <netinet/tcp.h>
#include <netinet/udp.h>

typedef struct iphdr __attribute__((aligned(1))) frame_iphdr;
typedef struct ip6_hdr __attribute__((aligned(1))) frame_ip6_hdr;
typedef struct tcphdr __attribute__((aligned(1))) frame_tcphdr;
typedef struct udphdr __attribute__((aligned(1))) frame_udphdr;
typedef struct icmphdr __attribute__((aligned(1))) frame_icmphdr;
typedef struct ether_arp __attribute__((aligned(1))) frame_ether_arp;

#endif /* ROCEMU_TESTS_FRAME_HEADERS_H */
