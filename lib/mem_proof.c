/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * What binds a new context to this process's memory (struct
 * rocemu_mem_proof, include/rocemu/ctrl.h): the daemon reads the request
 * back at its own address, which with a random nonce only this address
 * space holds; and a userfaultfd of this process, which the daemon takes
 * to learn what is unmapped under plain MRs. The shim's copy is closed
 * once the daemon answered: the daemon's is then the only one, so no
 * munmap ever waits for a daemon that is gone.
 */
#include "shim.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/syscall.h>

/* A userfaultfd reporting unmaps, or -1 where the kernel gives none (seccomp, an old kernel). */
static int uffd_open(void)
{
	struct uffdio_api api = {
		.api = UFFD_API,
		.features = UFFD_FEATURE_EVENT_UNMAP | UFFD_FEATURE_EVENT_REMOVE |
			    UFFD_FEATURE_EVENT_REMAP,
	};
	/* Reports only, never faults: user mode only needs no privilege (vm.unprivileged_userfaultfd). */
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);

	if (fd >= 0 && ioctl(fd, UFFDIO_API, &api)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

void rocemu_mem_proof_fill(struct rocemu_mem_proof *p, const void *req)
{
	p->self = (uintptr_t)req;
	while (getrandom(p->nonce, sizeof(p->nonce), 0) < 0 && errno == EINTR)
		;
	p->uffd = uffd_open();
	p->reserved = 0;
}

void rocemu_mem_proof_done(struct rocemu_mem_proof *p)
{
	if (p->uffd >= 0)
		close(p->uffd);
}
