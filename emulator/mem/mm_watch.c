/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/mem/mm_watch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>

#include "emulator/base/pid_fd.h"
#include "emulator/mem/mm.h"
#include "emulator/mem/pd_mr.h"
#include "emulator/mem/ufile.h"
#include "rocemu/log.h"

/* A range the process took away, and the report's generation. */
struct rocemu_mm_event {
	uint64_t start, end;
	uint64_t gen;
};

static uint64_t page_size(void)
{
	return (uint64_t)sysconf(_SC_PAGESIZE);
}

int rocemu_mm_watch_take(pid_t pid, int uffd)
{
	int fd = rocemu_pid_fd_take(pid, uffd);

	if (fd >= 0 && !rocemu_fd_is_userfaultfd(fd)) {
		close(fd);
		fd = -1;
	}
	if (fd < 0 && uffd >= 0)
		rocemu_log(ROCEMU_LOG_DEBUG, "pid %d: no userfaultfd: its plain MRs follow the mapping",
			   (int)pid);
	return fd;
}

/* The oldest generation a watching MR of mm holds: reports up to it concern none. */
static uint64_t oldest_watcher(const struct rocemu_mm *mm)
{
	const struct rocemu_ufile *f;
	const struct rocemu_mr *mr;
	uint64_t oldest = ROCEMU_MM_FOLLOWS;

	rocemu_list_for_each(f, &mm->emu->ufiles, struct rocemu_ufile, node)
		rocemu_list_for_each(mr, &f->mrs, struct rocemu_mr, node)
			if (mr->mm == mm && mr->mem_gen < oldest)
				oldest = mr->mem_gen;
	return oldest;
}

/* Keep reports some MR may still be reached through; false when out of memory. */
static bool events_room(struct rocemu_mm *mm)
{
	uint64_t oldest = oldest_watcher(mm);
	unsigned int i, kept = 0;
	struct rocemu_mm_event *grown;

	for (i = 0; i < mm->nevents; i++)
		if (mm->events[i].gen > oldest)
			mm->events[kept++] = mm->events[i];
	mm->nevents = kept;
	if (kept < mm->events_cap)
		return true;
	grown = realloc(mm->events, sizeof(*grown) * (mm->events_cap ? mm->events_cap * 2 : 16));
	if (!grown)
		return false;
	mm->events = grown;
	mm->events_cap = mm->events_cap ? mm->events_cap * 2 : 16;
	return true;
}

static void event_add(struct rocemu_mm *mm, const char *what, uint64_t start, uint64_t end)
{
	mm->gen++;
	rocemu_log(ROCEMU_LOG_DEBUG, "pid %d %s 0x%llx-0x%llx: no MR registered before reaches it",
		   (int)mm->pid, what, (unsigned long long)start, (unsigned long long)end);
	if (mm->nevents == mm->events_cap && !events_room(mm)) {
		mm->floor = mm->gen;
		return;
	}
	mm->events[mm->nevents++] = (struct rocemu_mm_event){ start, end, mm->gen };
}

/* Read the reports mm has pending. */
static void watch_sync(struct rocemu_mm *mm)
{
	struct uffd_msg msg[16];
	ssize_t n;
	size_t i;

	if (mm->uffd < 0)
		return;
	while ((n = read(mm->uffd, msg, sizeof(msg))) > 0) {
		for (i = 0; i < (size_t)n / sizeof(msg[0]); i++) {
			const struct uffd_msg *m = &msg[i];

			if (m->event == UFFD_EVENT_UNMAP)
				event_add(mm, "unmaps", m->arg.remove.start, m->arg.remove.end);
			else if (m->event == UFFD_EVENT_REMOVE)
				event_add(mm, "drops", m->arg.remove.start, m->arg.remove.end);
			else if (m->event == UFFD_EVENT_REMAP)
				event_add(mm, "moves", m->arg.remap.from,
					  m->arg.remap.from + m->arg.remap.len);
		}
	}
}

static void watch_ready(void *arg, int fd, uint32_t revents)
{
	watch_sync(arg);
}

void rocemu_mm_watch_start(struct rocemu_mm *mm)
{
	if (mm->uffd >= 0 && rocemu_loop_watch_fd(mm->emu->loop, mm->uffd, watch_ready, mm)) {
		close(mm->uffd);
		mm->uffd = -1;
	}
}

void rocemu_mm_watch_stop(struct rocemu_mm *mm)
{
	/* Closing the last copy takes the watch off every range: no munmap waits for us. */
	if (mm->uffd >= 0) {
		rocemu_loop_unwatch_fd(mm->emu->loop, mm->uffd);
		close(mm->uffd);
		mm->uffd = -1;
	}
	free(mm->events);
	mm->events = NULL;
	mm->nevents = mm->events_cap = 0;
}

/* The pages holding [addr, addr + len). */
static struct uffdio_range pages_of(uint64_t addr, uint64_t len)
{
	uint64_t page = page_size(), start = addr & ~(page - 1);

	return (struct uffdio_range){ start, ((addr + len + page - 1) & ~(page - 1)) - start };
}

uint64_t rocemu_mm_watch_range(struct rocemu_mm *mm, uint64_t addr, uint64_t len)
{
	struct uffdio_register reg = { .range = pages_of(addr, len),
				       .mode = UFFDIO_REGISTER_MODE_WP };

	if (mm->uffd < 0)
		return ROCEMU_MM_FOLLOWS;
	/* Reports of what was there before are not this MR's. */
	watch_sync(mm);
	if (ioctl(mm->uffd, UFFDIO_REGISTER, &reg)) {
		rocemu_log(ROCEMU_LOG_DEBUG, "pid %d: 0x%llx+%llu cannot be watched (%s): it follows the mapping",
			   (int)mm->pid, (unsigned long long)addr, (unsigned long long)len,
			   strerror(errno));
		return ROCEMU_MM_FOLLOWS;
	}
	return mm->gen;
}

void rocemu_mm_unwatch_range(struct rocemu_mm *mm, uint64_t addr, uint64_t len)
{
	struct uffdio_range r = pages_of(addr, len);
	const struct rocemu_ufile *f;
	const struct rocemu_mr *mr;
	struct uffdio_range other;

	if (mm->uffd < 0)
		return;
	rocemu_list_for_each(f, &mm->emu->ufiles, struct rocemu_ufile, node) {
		rocemu_list_for_each(mr, &f->mrs, struct rocemu_mr, node) {
			if (mr->mm != mm || mr->mem_gen == ROCEMU_MM_FOLLOWS)
				continue;
			other = pages_of(mr->addr, mr->length);
			if (other.start < r.start + r.len && r.start < other.start + other.len)
				return;
		}
	}
	/* Pages unmapped meanwhile are no longer watched: nothing to undo there. */
	ioctl(mm->uffd, UFFDIO_UNREGISTER, &r);
}

bool rocemu_mm_reachable_since(const struct rocemu_mm *mm, uint64_t addr, uint64_t len,
			       uint64_t gen)
{
	unsigned int i;

	if (gen == ROCEMU_MM_FOLLOWS)
		return true;
	if (gen < mm->floor)
		return false;
	for (i = 0; i < mm->nevents; i++)
		if (mm->events[i].gen > gen && mm->events[i].start < addr + len &&
		    addr < mm->events[i].end)
			return false;
	return true;
}
