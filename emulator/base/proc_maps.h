/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Is a range of another process's address space mapped (and writable)? */
#ifndef ROCEMU_EMULATOR_PROC_MAPS_H
#define ROCEMU_EMULATOR_PROC_MAPS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Check [addr, addr + len) against /proc/<pid>/maps: every byte must lie in
 * a readable mapping, and in a writable one when need_write. Returns 0,
 * -EFAULT when not, or -errno when the maps cannot be read.
 */
int rocemu_proc_range_check(pid_t pid, uint64_t addr, uint64_t len, bool need_write);

#endif /* ROCEMU_EMULATOR_PROC_MAPS_H */
