/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The taps on a device's traffic besides its send path (egress.h): every
 * datagram received is counted (the port's counters), captured (capture.c) and traced
 * (trace.c) here. The captures and fault injectors ROCEMU_PCAP and
 * ROCEMU_FAULTS ask for start with the daemon, captures are flushed when
 * it goes idle, and both stop with the device.
 */
#ifndef ROCEMU_EMULATOR_TAP_H
#define ROCEMU_EMULATOR_TAP_H

#include <stddef.h>
#include <stdint.h>

#include "net/roce/icrc.h"
#include "net/loop/loop.h"

struct rocemu_device;
struct rocemu_emu;

/*
 * Count, capture and trace one datagram received, sent to daddr (the device or a
 * group it joined), whose IPv4 header had the fields ip.
 */
void rocemu_tap_rx(struct rocemu_device *dev, uint32_t daddr, const struct rocemu_dgram *d,
		   const struct rocemu_ipv4_fields *ip);

/*
 * Apply ROCEMU_FAULTS and ROCEMU_PCAP from the environment to every device
 * of emu. On failure returns -errno with a one-line reason in err.
 */
int rocemu_tap_start(struct rocemu_emu *emu, char *err, size_t errlen);

/* Push captured frames to their files (the daemon is going idle). */
void rocemu_tap_idle(struct rocemu_emu *emu);

/* Stop injecting (held datagrams go out) and close captures. */
void rocemu_tap_stop(struct rocemu_device *dev);

#endif /* ROCEMU_EMULATOR_TAP_H */
