/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * `rocemu stats` as a person or a script reads it: the daemon's report
 * ("DEV COUNTER VALUE" lines and one "DEV faults SPEC" line per device)
 * printed as it is or as JSON, for every device or one.
 */
#ifndef ROCEMU_TOOLS_STATS_VIEW_H
#define ROCEMU_TOOLS_STATS_VIEW_H

#include <stdbool.h>
#include <stdio.h>

/* Print report (NUL-terminated) to out; dev NULL for every device. -ENODEV: no such device. */
int stats_view_print(const char *report, const char *dev, bool json, FILE *out);

#endif /* ROCEMU_TOOLS_STATS_VIEW_H */
