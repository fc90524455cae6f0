/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/mem/mm.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emulator/mem/mm_guard.h"
#include "emulator/mem/mm_watch.h"
#include "rocemu/log.h"

/* Does the address space of fd hold the len bytes of req at addr? */
static bool mm_holds(int fd, const void *req, size_t len, uint64_t addr)
{
	uint8_t seen[256];

	return len <= sizeof(seen) && pread(fd, seen, len, (off_t)addr) == (ssize_t)len &&
	       !memcmp(seen, req, len);
}

/* A new address space holding fd and uffd, charged to its process as charge says (NULL: the daemon's). */
static struct rocemu_mm *mm_new(struct rocemu_emu *emu, pid_t pid, int fd, int uffd,
				const struct rocemu_charge *charge)
{
	struct rocemu_mm *mm = calloc(1, sizeof(*mm));

	if (!mm)
		return NULL;
	if (charge)
		mm->charge = *charge;
	mm->emu = emu;
	mm->refs = 1;
	mm->pid = pid;
	mm->fd = fd;
	mm->uffd = uffd;
	rocemu_list_add_tail(&emu->mms, &mm->node);
	rocemu_mm_watch_start(mm);
	return mm;
}

static int mem_open(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	return open(path, O_RDWR | O_CLOEXEC);
}

int rocemu_mm_attach(struct rocemu_emu *emu, pid_t pid, uid_t uid, const void *req, size_t len,
		     const struct rocemu_mem_proof *proof, struct rocemu_mm **out)
{
	struct rocemu_account *acct;
	struct rocemu_charge charge;
	struct rocemu_mm *mm;
	int fd, uffd, err;

	rocemu_list_for_each(mm, &emu->mms, struct rocemu_mm, node) {
		if (mm->pid == pid && mm_holds(mm->fd, req, len, proof->self)) {
			*out = rocemu_mm_get(mm);
			return 0;
		}
	}
	/* Taken before the proof: a pid still the requester's then was so all along. */
	uffd = rocemu_mm_watch_take(pid, proof->uffd);
	fd = mem_open(pid);
	if (fd < 0 || !mm_holds(fd, req, len, proof->self)) {
		err = fd < 0 ? -errno : -ESRCH;
		rocemu_log(ROCEMU_LOG_WARN, "pid %d: its memory cannot be proven its own: %s",
			   (int)pid, strerror(-err));
		if (fd >= 0)
			close(fd);
		if (uffd >= 0)
			close(uffd);
		return err;
	}
	/* Its descriptors are held for the process, whose account its connection made. */
	acct = rocemu_account_of(emu, pid, "?");
	err = acct ? rocemu_charge_account(acct, NULL, &charge, ROCEMU_RES_MM,
					   (struct rocemu_amount){ .fds = uffd >= 0 ? 2 : 1 }) : -ENOMEM;
	if (!err) {
		*out = mm_new(emu, pid, fd, uffd, &charge);
		if (*out) {
			rocemu_mm_guard_take(*out, uid, proof);
		} else {
			rocemu_uncharge(&charge);
			err = -ENOMEM;
		}
	}
	if (err) {
		close(fd);
		if (uffd >= 0)
			close(uffd);
	}
	return err;
}

struct rocemu_mm *rocemu_mm_self(struct rocemu_emu *emu)
{
	struct rocemu_mm *mm;
	pid_t self = getpid();
	int fd;

	rocemu_list_for_each(mm, &emu->mms, struct rocemu_mm, node)
		if (mm->pid == self)
			return rocemu_mm_get(mm);
	fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	mm = mm_new(emu, self, fd, -1, NULL);
	if (!mm) {
		close(fd);
		errno = ENOMEM;
	}
	return mm;
}

struct rocemu_mm *rocemu_mm_get(struct rocemu_mm *mm)
{
	mm->refs++;
	return mm;
}

void rocemu_mm_put(struct rocemu_mm *mm)
{
	if (--mm->refs)
		return;
	rocemu_mm_watch_stop(mm);
	rocemu_mm_guard_drop(mm);
	rocemu_list_del(&mm->node);
	close(mm->fd);
	rocemu_uncharge(&mm->charge);
	free(mm);
}

int rocemu_mm_copy(const struct rocemu_mm *mm, const struct iovec *local, unsigned int nlocal,
		   uint64_t addr, size_t bytes, bool write)
{
	ssize_t done = write ? pwritev(mm->fd, local, (int)nlocal, (off_t)addr)
			     : preadv(mm->fd, local, (int)nlocal, (off_t)addr);

	/* Nothing at all, with no error: the address space has no users left. */
	if (done == 0 && bytes)
		return -ESRCH;
	return done == (ssize_t)bytes ? 0 : -EFAULT;
}
