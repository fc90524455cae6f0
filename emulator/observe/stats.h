/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * A device's port counters, named like the hardware counters `rdma
 * statistic` shows, and the text `rocemu stats` prints of every counter.
 */
#ifndef ROCEMU_EMULATOR_STATS_H
#define ROCEMU_EMULATOR_STATS_H

#include <stddef.h>
#include <stdint.h>

struct rocemu_device;
struct rocemu_emu;

/* Count npkts packets of len bytes in all sent (port_xmit_*). */
void rocemu_stats_xmit(struct rocemu_device *dev, uint64_t npkts, size_t len);
/* Count npkts packets not sent: the port was down (port_xmit_discards). */
void rocemu_stats_xmit_discard(struct rocemu_device *dev, uint64_t npkts);
/* Count one datagram of len bytes received (port_rcv_*). */
void rocemu_stats_rcv(struct rocemu_device *dev, size_t len);

/*
 * Counters of every device as text, one "<dev> <counter> <value>" line each,
 * then "<dev> faults <spec|off>". Returns the length with its NUL, or
 * -ENOSPC.
 */
int rocemu_stats_text(struct rocemu_emu *emu, char *buf, size_t size);

#endif /* ROCEMU_EMULATOR_STATS_H */
