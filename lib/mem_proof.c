/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * What binds a new context to this process's memory (struct
 * rocemu_mem_proof, include/rocemu/ctrl.h): the daemon reads the request
 * back at its own address, which with a random nonce only this address
 * space holds; and a userfaultfd of this process, which the daemon takes
 * to learn what is unmapped under plain MRs. The shim's copy is closed
 * once the daemon answered: the daemon's is then the only one, so no
 * munmap ever waits for a daemon that is gone. And a guard: one page of a
 * sealed memfd, mapped shared at a random address no program maps by
 * itself, which every copy the daemon makes by pid passes through
 * (emulator/mem/mm_guard.h). It is made once per process and kept; a forked
 * child does not inherit it (MADV_DONTFORK) and makes its own.
 */
#include "lib/shim.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/syscall.h>

/* The guard of this process: pid tells a forked child that the page is its parent's. */
static struct {
	pthread_mutex_t lock;
	pid_t pid;
	uint64_t addr;
	int fd;
} guard = { PTHREAD_MUTEX_INITIALIZER, 0, 0, -1 };

static void guard_lock_reset(void)
{
	pthread_mutex_init(&guard.lock, NULL);
}

/* Another thread may hold the lock at fork: the child's copy must start free. */
static void guard_lock_reset_at_fork(void)
{
	pthread_atfork(NULL, NULL, guard_lock_reset);
}

/* Where heaps, stacks and libraries are not: 1 TiB up to 64 TiB. */
#define GUARD_SPAN_LO (1ull << 40)
#define GUARD_SPAN_HI (1ull << 46)

int rocemu_uffd_open(uint64_t features)
{
	struct uffdio_api api = { .api = UFFD_API, .features = features };
	/* User mode only needs no privilege (vm.unprivileged_userfaultfd is 0). */
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);

	if (fd >= 0 && ioctl(fd, UFFDIO_API, &api)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* A page of fd at a random address of the guard span, or NULL where none is free. */
static void *guard_map(int fd, size_t page)
{
	uint64_t pick;
	void *at;
	int tries;

	for (tries = 0; tries < 8; tries++) {
		if (getrandom(&pick, sizeof(pick), 0) != sizeof(pick))
			return NULL;
		pick = GUARD_SPAN_LO + (pick % (GUARD_SPAN_HI - GUARD_SPAN_LO)) / page * page;
		at = mmap((void *)(uintptr_t)pick, page, PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);
		if (at == (void *)(uintptr_t)pick)
			return at;
		/* A kernel without MAP_FIXED_NOREPLACE takes the address as a hint. */
		if (at != MAP_FAILED)
			munmap(at, page);
		else if (errno != EEXIST)
			return NULL;
	}
	return NULL;
}

/* The guard of this process, made on its first context; false when it has none. */
static bool guard_get(uint64_t *addr, int *fd)
{
	static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *at = NULL;

	pthread_once(&atfork_once, guard_lock_reset_at_fork);
	pthread_mutex_lock(&guard.lock);
	if (guard.pid != getpid()) {
		/* The parent's fd is inherited, not its page: ours replaces both. */
		if (guard.fd >= 0)
			close(guard.fd);
		guard.pid = getpid();
		guard.fd = memfd_create("rocemu-guard", MFD_CLOEXEC | MFD_ALLOW_SEALING);
		if (guard.fd >= 0 && !ftruncate(guard.fd, (off_t)page) &&
		    !fcntl(guard.fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL))
			at = guard_map(guard.fd, page);
		if (at) {
			madvise(at, page, MADV_DONTFORK);
			guard.addr = (uintptr_t)at;
		} else if (guard.fd >= 0) {
			close(guard.fd);
			guard.fd = -1;
		}
	}
	*addr = guard.addr;
	*fd = guard.fd;
	pthread_mutex_unlock(&guard.lock);
	return *fd >= 0;
}

void rocemu_mem_proof_fill(struct rocemu_mem_proof *p, const void *req)
{
	p->self = (uintptr_t)req;
	while (getrandom(p->nonce, sizeof(p->nonce), 0) < 0 && errno == EINTR)
		;
	/* Reports of unmaps only, never faults. */
	p->uffd = rocemu_uffd_open(UFFD_FEATURE_EVENT_UNMAP | UFFD_FEATURE_EVENT_REMOVE |
				   UFFD_FEATURE_EVENT_REMAP);
	if (!guard_get(&p->guard, &p->guard_fd)) {
		p->guard = 0;
		p->guard_fd = -1;
	}
}

void rocemu_mem_proof_done(struct rocemu_mem_proof *p)
{
	if (p->uffd >= 0)
		close(p->uffd);
}
