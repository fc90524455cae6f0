/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The Internet checksum (RFC 1071) and the checksum offload of a ConnectX
 * send (IBV_SEND_IP_CSUM, mlx5 cs_flags L3 and L4): a frame's IPv4 header
 * checksum and its TCP or UDP checksum over the IPv4 or IPv6 pseudo
 * header, filled in place. The frame parse verifies received ones with
 * the same sums.
 */
#ifndef ROCEMU_NET_INET_CSUM_H
#define ROCEMU_NET_INET_CSUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/eth/eth_frame.h"

/*
 * sum plus the one's complement sum of buf[0, len), buf starting at an
 * even offset of the summed data; the sum is unfolded, in host-order
 * words (the one's complement sum does not depend on byte order).
 */
uint64_t rocemu_csum_add(uint64_t sum, const void *buf, size_t len);

/* The checksum of a sum as it goes in a header: folded, inverted, network order. */
uint16_t rocemu_csum_fold(uint64_t sum);

/* The sum of the pseudo header of f's L4 segment of len bytes (RFC 793, RFC 8200 8.1). */
uint64_t rocemu_csum_pseudo(const struct rocemu_eth_frame *f, uint32_t len);

/*
 * The bytes f's TCP or UDP checksum covers: the IP payload for TCP, the
 * UDP length for UDP. f is a parse with l4 TCP or UDP.
 */
uint32_t rocemu_csum_l4_len(const struct rocemu_eth_frame *f);

/* Whether f's L4 checksum is right; f is a parse with l4 TCP or UDP. */
bool rocemu_csum_l4_ok(const struct rocemu_eth_frame *f);

/*
 * Fill in the checksums of frame (parsed into f, f->data == frame) as a
 * ConnectX send does: l3, an IPv4 header's; l4, a TCP or UDP segment's
 * (a UDP sum of 0 sent as 0xffff). A layer the frame lacks, or the L4
 * segment of a fragment, is left alone.
 */
void rocemu_csum_fill(uint8_t *frame, const struct rocemu_eth_frame *f, bool l3, bool l4);

#endif /* ROCEMU_NET_INET_CSUM_H */
