/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * TCP segmentation offload as a ConnectX LSO does it: the headers the WQE
 * gives inline (Ethernet, an optional 802.1Q tag, IPv4 or IPv6, TCP) put
 * before each mss bytes of the payload, each segment's IPv4 total length
 * and ID (the first keeps the ID, each next one more), IPv6 payload
 * length, TCP sequence number and flags (FIN and PSH on the last segment
 * only, CWR on the first only) and checksums set.
 */
#ifndef ROCEMU_NET_TSO_H
#define ROCEMU_NET_TSO_H

#include <stdint.h>

/* Where the payload comes from and where the segments go; a nonzero return stops. */
struct rocemu_tso_io {
	/* Copy len bytes at offset off of the payload to dst: 0 or -errno. */
	int (*gather)(void *arg, uint32_t off, uint8_t *dst, uint32_t len);
	/* Send one segment of len bytes: 0 or -errno. */
	int (*emit)(void *arg, const uint8_t *frame, uint32_t len);
	void *arg;
};

/*
 * Cut payload_len bytes into segments of mss bytes behind hdr[0, hdr_len),
 * each built in frame (frame_size bytes) and emitted; a payload of 0
 * bytes is one segment of headers. 0, the first error of io, or -EINVAL
 * for mss 0, headers that are not Ethernet/IP/TCP or whose TCP header
 * does not end at hdr_len, an IP fragment, or a frame too small.
 */
int rocemu_tso(const uint8_t *hdr, uint32_t hdr_len, uint32_t payload_len, uint16_t mss,
	       uint8_t *frame, uint32_t frame_size, const struct rocemu_tso_io *io);

#endif /* ROCEMU_NET_TSO_H */
