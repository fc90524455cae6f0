/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * What a process unmaps under a plain (not ODP) MR. A ConnectX pins the
 * pages at registration: memory the process unmaps or replaces later is
 * never what the adapter reaches. Here every access goes through the
 * address space as it is now, so an MR must stop reaching a range once
 * the process has taken it away: else a remote WRITE would land in
 * whatever the process maps there next (a file, another allocation).
 *
 * The process's userfaultfd (made by the shim, taken at attach) is
 * registered over each plain MR's pages, in write-protect mode with no
 * page ever protected, so no fault ever waits on the daemon; only its
 * events are used: the kernel reports munmap, mmap over the range
 * (MAP_FIXED), mremap, brk shrinking, madvise(MADV_DONTNEED/REMOVE),
 * whoever calls them (glibc's free() as well), and the caller waits until
 * the daemon has read the report. Each report takes its range away from
 * every MR registered before it (a generation count orders them); the
 * loop reads reports as they come, and the caller cannot map anything at
 * that address before the daemon has read its report. A range the kernel
 * cannot watch (a mapping of a regular file, one another userfaultfd
 * watches, a process without userfaultfd) follows the mapping, as ODP.
 */
#ifndef ROCEMU_EMULATOR_MM_WATCH_H
#define ROCEMU_EMULATOR_MM_WATCH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "emulator/mem/mm.h"

/* The generation of memory that follows the mapping (ODP, unwatched): no report touches it. */
#define ROCEMU_MM_FOLLOWS UINT64_MAX

/* fd uffd of process pid as our own, when it is a userfaultfd; -1 otherwise. */
int rocemu_mm_watch_take(pid_t pid, int uffd);
/* Read mm's reports as they come (at creation), and stop (at free). */
void rocemu_mm_watch_start(struct rocemu_mm *mm);
void rocemu_mm_watch_stop(struct rocemu_mm *mm);
/*
 * Watch the pages of [addr, addr + len) for an MR registered now: the
 * generation to keep with it, or ROCEMU_MM_FOLLOWS when they cannot be
 * watched.
 */
uint64_t rocemu_mm_watch_range(struct rocemu_mm *mm, uint64_t addr, uint64_t len);
/* An MR over [addr, addr + len) went: stop watching there unless another MR still is. */
void rocemu_mm_unwatch_range(struct rocemu_mm *mm, uint64_t addr, uint64_t len);
/* The reports after generation gen that take part of [addr, addr + len) away: false if any. */
bool rocemu_mm_reachable_since(const struct rocemu_mm *mm, uint64_t addr, uint64_t len,
			       uint64_t gen);

/*
 * Is [addr, addr + len), as of generation gen, still the memory there now?
 * Inline for the case of every copy: no report since gen.
 */
static inline bool rocemu_mm_reachable(const struct rocemu_mm *mm, uint64_t addr, uint64_t len,
				       uint64_t gen)
{
	return gen >= mm->gen || rocemu_mm_reachable_since(mm, addr, len, gen);
}

#endif /* ROCEMU_EMULATOR_MM_WATCH_H */
