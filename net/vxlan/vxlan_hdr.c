/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "net/vxlan/vxlan_hdr.h"

#include <errno.h>
#include <linux/if_ether.h>
#include <netinet/ip.h>
#include <stddef.h>
#include <string.h>

void rocemu_vxlan_hdr_build(struct rocemu_vxlan_hdr *h, uint32_t vni)
{
	memset(h, 0, sizeof(*h));
	h->flags = ROCEMU_VXLAN_FLAG_I;
	h->vni[0] = (uint8_t)(vni >> 16);
	h->vni[1] = (uint8_t)(vni >> 8);
	h->vni[2] = (uint8_t)vni;
}

int rocemu_vxlan_hdr_parse(const uint8_t *data, size_t len, uint32_t *vni)
{
	const struct rocemu_vxlan_hdr *h = (const void *)data;

	if (len < ROCEMU_VXLAN_HLEN || !(h->flags & ROCEMU_VXLAN_FLAG_I))
		return -EINVAL;
	*vni = (uint32_t)h->vni[0] << 16 | (uint32_t)h->vni[1] << 8 | h->vni[2];
	return 0;
}

/* FNV-1a over bytes, the running hash h. */
static uint32_t hash_bytes(uint32_t h, const uint8_t *p, size_t n)
{
	while (n--)
		h = (h ^ *p++) * 16777619u;
	return h;
}

unsigned int rocemu_vxlan_sport_index(const uint8_t *frame, size_t len, unsigned int count)
{
	const size_t ip_off = ETH_HLEN;
	uint32_t h = 2166136261u;

	h = hash_bytes(h, frame, len < ETH_HLEN ? len : ETH_HLEN);
	if (len >= ip_off + sizeof(struct iphdr) && frame[12] == (ETH_P_IP >> 8) &&
	    frame[13] == (ETH_P_IP & 0xff)) {
		h = hash_bytes(h, frame + ip_off + offsetof(struct iphdr, protocol), 1);
		h = hash_bytes(h, frame + ip_off + offsetof(struct iphdr, saddr), 8);
	}
	/* murmur3's finalizer: every input bit reaches the high bits the scaling keeps */
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return (unsigned int)(((uint64_t)h * count) >> 32);
}
