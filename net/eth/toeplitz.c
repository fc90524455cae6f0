/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The Toeplitz hash and the RSS hash of a frame (see toeplitz.h). */
#include <infiniband/verbs.h>
#include <string.h>

#include "net/eth/toeplitz.h"

#define RSS_IPV4 (IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4)
#define RSS_IPV6 (IBV_RX_HASH_SRC_IPV6 | IBV_RX_HASH_DST_IPV6)
#define RSS_TCP (IBV_RX_HASH_SRC_PORT_TCP | IBV_RX_HASH_DST_PORT_TCP)
#define RSS_UDP (IBV_RX_HASH_SRC_PORT_UDP | IBV_RX_HASH_DST_PORT_UDP)
#define RSS_SRC_IP (IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_SRC_IPV6)
#define RSS_DST_IP (IBV_RX_HASH_DST_IPV4 | IBV_RX_HASH_DST_IPV6)
#define RSS_SRC_PORT (IBV_RX_HASH_SRC_PORT_TCP | IBV_RX_HASH_SRC_PORT_UDP)
#define RSS_DST_PORT (IBV_RX_HASH_DST_PORT_TCP | IBV_RX_HASH_DST_PORT_UDP)
#define RSS_INPUT_MAX (16 + 16 + 2 + 2)

/* Bit i of the key, 0 past its end. */
static uint32_t key_bit(const uint8_t *key, size_t key_len, size_t i)
{
	return i / 8 < key_len ? (key[i / 8] >> (7 - i % 8)) & 1 : 0;
}

uint32_t rocemu_toeplitz(const uint8_t *key, size_t key_len, const uint8_t *data, size_t len)
{
	uint32_t window = 0, hash = 0;
	size_t i;

	/* The key's 32-bit window slides one bit per input bit; each input 1 takes it in. */
	for (i = 0; i < 32; i++)
		window = window << 1 | key_bit(key, key_len, i);
	for (i = 0; i < len * 8; i++) {
		if ((data[i / 8] >> (7 - i % 8)) & 1)
			hash ^= window;
		window = window << 1 | key_bit(key, key_len, i + 32);
	}
	return hash;
}

static size_t put_port(uint8_t *p, uint16_t port)
{
	p[0] = (uint8_t)(port >> 8);
	p[1] = (uint8_t)port;
	return 2;
}

/* The CQE's hash type of a hash over fields. */
static uint8_t hash_type(uint64_t fields)
{
	uint8_t type = 0;

	if (fields & RSS_IPV4)
		type |= ROCEMU_RSS_HTYPE_IPV4;
	else if (fields & RSS_IPV6)
		type |= ROCEMU_RSS_HTYPE_IPV6;
	if (fields & RSS_TCP)
		type |= ROCEMU_RSS_HTYPE_TCP;
	else if (fields & RSS_UDP)
		type |= ROCEMU_RSS_HTYPE_UDP;
	return type;
}

/* Whether f has every field asked. */
static bool has_fields(const struct rocemu_eth_frame *f, uint64_t fields)
{
	if (!fields || (fields & ~(uint64_t)(RSS_IPV4 | RSS_IPV6 | RSS_TCP | RSS_UDP)))
		return false;
	if ((fields & RSS_IPV4) && f->l3 != ROCEMU_ETH_L3_IPV4)
		return false;
	if ((fields & RSS_IPV6) && f->l3 != ROCEMU_ETH_L3_IPV6)
		return false;
	if ((fields & (RSS_TCP | RSS_UDP)) && f->fragment)
		return false;
	if ((fields & RSS_TCP) && f->l4 != ROCEMU_ETH_L4_TCP)
		return false;
	return !(fields & RSS_UDP) || f->l4 == ROCEMU_ETH_L4_UDP;
}

bool rocemu_rss_hash(const struct rocemu_eth_frame *f, const struct rocemu_rss_conf *conf,
		     struct rocemu_rss_hash *out)
{
	const uint64_t fields = conf->fields & ~(uint64_t)IBV_RX_HASH_INNER;
	const size_t alen = f->l3 == ROCEMU_ETH_L3_IPV4 ? 4 : 16;
	struct rocemu_rss_conf inner_conf;
	struct rocemu_eth_frame inner;
	uint8_t input[RSS_INPUT_MAX];
	size_t len = 0;

	*out = (struct rocemu_rss_hash){ 0 };
	if (conf->fields & IBV_RX_HASH_INNER) {
		inner_conf = (struct rocemu_rss_conf){ conf->key, conf->key_len, fields };
		return f->vxlan &&
		       rocemu_eth_parse(&inner, f->data + f->inner_off, f->len - f->inner_off) &&
		       rocemu_rss_hash(&inner, &inner_conf, out);
	}
	if (!has_fields(f, fields))
		return false;
	if (fields & RSS_SRC_IP) {
		memcpy(input + len, f->saddr, alen);
		len += alen;
	}
	if (fields & RSS_DST_IP) {
		memcpy(input + len, f->daddr, alen);
		len += alen;
	}
	if (fields & RSS_SRC_PORT)
		len += put_port(input + len, f->sport);
	if (fields & RSS_DST_PORT)
		len += put_port(input + len, f->dport);
	*out = (struct rocemu_rss_hash){
		.value = rocemu_toeplitz(conf->key, conf->key_len, input, len),
		.type = hash_type(fields),
	};
	return true;
}
