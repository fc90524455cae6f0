/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The Toeplitz hash of RSS, and the hash a ConnectX's RSS QP (a TIR) takes
 * of a received frame: over the fields of enum ibv_rx_hash_fields the QP
 * asked, in the order source IP, destination IP, source port, destination
 * port, as mlx5 selects them (kernel create_rss_raw_qp_tir: one IP version
 * and one L4 protocol, the fields of either). A frame without a field
 * asked is not hashed: hash 0, the indirection table's first entry.
 */
#ifndef ROCEMU_NET_TOEPLITZ_H
#define ROCEMU_NET_TOEPLITZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/eth/eth_frame.h"

/* The CQE's rss_hash_type: bits 3:2 the IP version hashed, 7:6 the L4 protocol (mlx5e CQE_RSS_HTYPE_*). */
enum {
	ROCEMU_RSS_HTYPE_IPV4 = 1 << 2,
	ROCEMU_RSS_HTYPE_IPV6 = 2 << 2,
	ROCEMU_RSS_HTYPE_TCP = 1 << 6,
	ROCEMU_RSS_HTYPE_UDP = 2 << 6,
};

/* The Toeplitz hash of data[0, len) under key[0, key_len); key bits past key_len are 0. */
uint32_t rocemu_toeplitz(const uint8_t *key, size_t key_len, const uint8_t *data, size_t len);

/* An RSS QP's hash config, as ibv_rx_hash_conf gives it. */
struct rocemu_rss_conf {
	const uint8_t *key;
	size_t key_len;
	uint64_t fields;	/* enum ibv_rx_hash_fields */
};

/* The RSS hash of a frame and its CQE hash type. */
struct rocemu_rss_hash {
	uint32_t value;
	uint8_t type;		/* ROCEMU_RSS_HTYPE_*, 0: not hashed */
};

/*
 * The hash of f under conf (with IBV_RX_HASH_INNER, of the frame a VXLAN
 * f carries); false, and a hash of 0 and type 0, when f lacks a field
 * asked or no field is asked. A fragment has no ports to hash.
 */
bool rocemu_rss_hash(const struct rocemu_eth_frame *f, const struct rocemu_rss_conf *conf,
		     struct rocemu_rss_hash *out);

#endif /* ROCEMU_NET_TOEPLITZ_H */
