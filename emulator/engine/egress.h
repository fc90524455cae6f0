/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * A device's one way out to the wire: every RoCE datagram it sends is
 * counted (stats.c), traced (trace.c), captured (capture.c), passed
 * through its fault injector (fault_inject.c) and sent. What it receives
 * passes the same taps in tap.c.
 */
#ifndef ROCEMU_EMULATOR_EGRESS_H
#define ROCEMU_EMULATOR_EGRESS_H

#include <stddef.h>
#include <stdint.h>

#include "net/icrc.h"
#include "net/loop.h"

struct rocemu_device;

/*
 * Where a device's datagrams go at the end of egress. The daemon leaves
 * send NULL: they leave through the UDP sockets of the event loop. A unit
 * test sets a fake wire instead, which gets every datagram after capture
 * (faults are not injected on it) and may hand it to rocemu_rx_datagram;
 * a device on a fake wire opens no socket (sport.c).
 */
struct rocemu_wire {
	/* buf[0, len) along flow: one datagram, or with gso > 0 a run of gso-byte packets. */
	int (*send)(void *arg, const struct rocemu_ipv4_udp *flow, const void *buf, size_t len,
		    uint16_t gso);
	void *arg;
};

/*
 * Send buf[0, len) on socket fd along flow (its source port is fd's):
 * one datagram, or with gso > 0 a batch of segments of gso bytes (the
 * last possibly shorter). Counts it, captures each packet and passes it
 * through the device's fault injector, or hands it to the device's fake
 * wire. Returns 0 or -errno of the send.
 */
int rocemu_egress_send(struct rocemu_device *dev, int fd, const struct rocemu_ipv4_udp *flow,
		       const void *buf, size_t len, uint16_t gso);

#endif /* ROCEMU_EMULATOR_EGRESS_H */
