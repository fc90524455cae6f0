/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/base/proc_maps.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

int rocemu_proc_range_check(pid_t pid, uint64_t addr, uint64_t len, bool need_write)
{
	uint64_t covered = addr, end = addr + len, start, stop;
	char path[64], line[512], perms[8];
	FILE *f;
	int ret = -EFAULT;

	if (len == 0 || end < addr)
		return -EFAULT;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	/* Mappings come sorted by address: walk them extending the covered prefix. */
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s", &start, &stop, perms) != 3)
			continue;
		if (stop <= covered)
			continue;
		if (start > covered)
			break;
		if (perms[0] != 'r' || (need_write && perms[1] != 'w'))
			break;
		covered = stop;
		if (covered >= end) {
			ret = 0;
			break;
		}
	}
	fclose(f);
	return ret;
}
