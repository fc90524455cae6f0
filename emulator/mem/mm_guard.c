/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/mem/mm_guard.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "emulator/base/pid_fd.h"
#include "emulator/mem/mm.h"
#include "rocemu/log.h"

static size_t page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

/* A shared map of a page of fd, which no one can shrink under us, or NULL. */
static void *guard_map(int fd)
{
	struct stat st;
	void *map;
	int seals = fcntl(fd, F_GET_SEALS);

	if (seals < 0 || !(seals & F_SEAL_SHRINK) || fstat(fd, &st) ||
	    !S_ISREG(st.st_mode) || st.st_size < (off_t)page_size())
		return NULL;
	map = mmap(NULL, page_size(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	return map == MAP_FAILED ? NULL : map;
}

/* Put value in the daemon's view of the guard. */
static void guard_set(const struct rocemu_mm *mm, uint64_t value)
{
	__atomic_store_n((uint64_t *)mm->guard, value, __ATOMIC_RELAXED);
}

void rocemu_mm_guard_take(struct rocemu_mm *mm, uid_t uid, const struct rocemu_mem_proof *proof)
{
	uint64_t token, seen = 0;
	void *map = NULL;
	int fd;

	if (mm->emu->dma_by_mem || uid != geteuid() || proof->guard_fd < 0 ||
	    proof->guard % page_size())
		return;
	fd = rocemu_pid_fd_take(mm->pid, proof->guard_fd);
	if (fd >= 0) {
		map = guard_map(fd);
		close(fd);
	}
	if (!map)
		return;
	mm->guard = map;
	if (getrandom(&mm->guard_token, sizeof(mm->guard_token), 0) == sizeof(mm->guard_token)) {
		token = ++mm->guard_token;
		guard_set(mm, token);
		/* Proven through /proc/PID/mem: that address is that page in this address space. */
		if (pread(mm->fd, &seen, sizeof(seen), (off_t)proof->guard) == sizeof(seen) &&
		    seen == token) {
			mm->guard_addr = proof->guard;
			rocemu_log(ROCEMU_LOG_DEBUG, "pid %d: copies by pid through its guard at 0x%llx",
				   (int)mm->pid, (unsigned long long)mm->guard_addr);
			return;
		}
	}
	rocemu_mm_guard_drop(mm);
}

void rocemu_mm_guard_drop(struct rocemu_mm *mm)
{
	if (mm->guard)
		munmap(mm->guard, page_size());
	mm->guard = NULL;
	mm->guard_addr = 0;
}

bool rocemu_mm_guard_copy(struct rocemu_mm *mm, struct iovec *local, unsigned int nlocal,
			  struct iovec *remote, unsigned int nremote, size_t bytes, bool write)
{
	uint64_t token, scratch;
	ssize_t done;

	if (!mm->guard)
		return false;
	token = ++mm->guard_token;
	remote[0] = (struct iovec){ (void *)(uintptr_t)mm->guard_addr, sizeof(token) };
	if (!write) {
		guard_set(mm, token);
		local[0] = (struct iovec){ &scratch, sizeof(scratch) };
		done = process_vm_readv(mm->pid, local, nlocal, remote, nremote, 0);
		return done == (ssize_t)(sizeof(token) + bytes) && scratch == token;
	}
	/* Only this write can put the token in the page. */
	guard_set(mm, token - 1);
	local[0] = (struct iovec){ &token, sizeof(token) };
	done = process_vm_writev(mm->pid, local, nlocal, remote, nremote, 0);
	if (done <= 0)
		return false;
	if (__atomic_load_n((uint64_t *)mm->guard, __ATOMIC_RELAXED) != token) {
		rocemu_log(ROCEMU_LOG_WARN, "pid %d: a copy by pid reached another address space at its guard 0x%llx: copies go through /proc/PID/mem from now",
			   (int)mm->pid, (unsigned long long)mm->guard_addr);
		rocemu_mm_guard_drop(mm);
		return false;
	}
	return done == (ssize_t)(sizeof(token) + bytes);
}
