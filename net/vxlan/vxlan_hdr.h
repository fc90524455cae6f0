/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The VXLAN header (RFC 7348) that carries an Ethernet frame in a UDP
 * datagram to port 4789, and the outer source port a sender picks for a
 * frame: a hash of its flow, so that ECMP spreads flows as Linux's vxlan
 * spreads them, and a flow keeps its port.
 */
#ifndef ROCEMU_NET_VXLAN_HDR_H
#define ROCEMU_NET_VXLAN_HDR_H

#include <stddef.h>
#include <stdint.h>

/* The I flag: the VNI is valid (the only flag RFC 7348 defines). */
#define ROCEMU_VXLAN_FLAG_I 0x08

/* The first outer source port: in the ephemeral range, below the 0xC000 RoCE flows use. */
#define ROCEMU_VXLAN_SPORT_MIN 0xbf00u

/* No installed header declares it (the kernel's struct vxlanhdr is not UAPI). */
struct rocemu_vxlan_hdr {
	uint8_t flags;
	uint8_t reserved1[3];
	uint8_t vni[3];			/* network order */
	uint8_t reserved2;
};

#define ROCEMU_VXLAN_HLEN sizeof(struct rocemu_vxlan_hdr)

/* h for vni (24 bits), the reserved fields zero. */
void rocemu_vxlan_hdr_build(struct rocemu_vxlan_hdr *h, uint32_t vni);

/*
 * The VNI of the datagram data[0, len): 0, or -EINVAL when it is shorter
 * than the header or its I flag is clear. Reserved bits are ignored, as
 * RFC 7348 says a receiver ignores them.
 */
int rocemu_vxlan_hdr_parse(const uint8_t *data, size_t len, uint32_t *vni);

/*
 * Which of count source ports frame[0, len) leaves from (0 .. count - 1):
 * a hash of its MACs and EtherType and, for IPv4, its addresses and
 * protocol, scaled to count as Linux scales its flow hash to the port range.
 */
unsigned int rocemu_vxlan_sport_index(const uint8_t *frame, size_t len, unsigned int count);

#endif /* ROCEMU_NET_VXLAN_HDR_H */
