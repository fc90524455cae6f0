/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * A device's one way out to the wire: every RoCE datagram it sends is
 * counted (the port's counters), traced (trace.c), captured (capture.c), passed
 * through its fault injector (fault_inject.c) and sent. What it receives
 * passes the same taps in tap.c.
 */
#ifndef ROCEMU_EMULATOR_EGRESS_H
#define ROCEMU_EMULATOR_EGRESS_H

#include <stddef.h>
#include <stdint.h>

#include "net/roce/icrc.h"
#include "net/loop/loop.h"

struct rocemu_device;

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
