/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The text `rocemu stats` prints of every device's counters (named like
 * the hardware counters `rdma statistic` shows): the egress and the
 * receive tap count the port's packets themselves, on the data path.
 */
#ifndef ROCEMU_EMULATOR_STATS_H
#define ROCEMU_EMULATOR_STATS_H

#include <stddef.h>

struct rocemu_emu;

/*
 * Counters of every device as text, one "<dev> <counter> <value>" line each,
 * then "<dev> faults <spec|off>". Returns the length with its NUL, or
 * -ENOSPC.
 */
int rocemu_stats_text(struct rocemu_emu *emu, char *buf, size_t size);

#endif /* ROCEMU_EMULATOR_STATS_H */
