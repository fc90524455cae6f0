/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * A client process's address space as the DMA engine reaches it: an open
 * /proc/PID/mem, which names that address space and no other. A pid can
 * be reused once its process is reaped, and exec replaces the memory
 * under the same pid; the open file keeps to the address space it was
 * opened on, and reads and writes through it find nothing once that is
 * gone. Shared by the contexts of one process and held by each MR over it.
 *
 * The file is opened at OPEN_DEVICE and IMPORT_DEVICE by the pid the
 * socket names, then proven: the whole request, which carries a random
 * nonce, must read back at the address the request says it lives at.
 * Copies by pid, which are faster, pass through the process's guard
 * (mm_guard.h) where it has one.
 */
#ifndef ROCEMU_EMULATOR_MM_H
#define ROCEMU_EMULATOR_MM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "emulator/core/emu.h"
#include "rocemu/ctrl.h"

struct rocemu_mm_event;

struct rocemu_mm {
	struct rocemu_emu *emu;
	struct rocemu_list node;	/* in emu->mms */
	unsigned int refs;		/* clients and MRs */
	pid_t pid;			/* at attach: for logs and look-up, never for access */
	int fd;				/* /proc/PID/mem */
	int uffd;			/* unmaps of its watched ranges (mm_watch.h), or -1 */
	uint64_t gen;			/* events seen on uffd */
	uint64_t floor;			/* MRs older reach nothing: reports lost for want of memory */
	struct rocemu_mm_event *events;	/* the ranges they took away, newest last */
	unsigned int nevents, events_cap;
	struct rocemu_charge charge;	/* limits.h: fd and uffd, to the process; none for the daemon's */
	void *guard;			/* our map of its guard page (mm_guard.h), or NULL */
	uint64_t guard_addr;		/* where it maps that page */
	uint64_t guard_token;		/* the last token put there */
};

/*
 * The address space of process pid that holds the len bytes of req at
 * proof->self: one a client of that process already has, else opened
 * now, with proof->uffd and the guard taken from the process (of user
 * uid) when the request names them. -ESRCH when pid is not the
 * requester's any more, or -errno.
 */
int rocemu_mm_attach(struct rocemu_emu *emu, pid_t pid, uid_t uid, const void *req, size_t len,
		     const struct rocemu_mem_proof *proof, struct rocemu_mm **out);
/* The daemon's own address space (device memory), or NULL with errno. */
struct rocemu_mm *rocemu_mm_self(struct rocemu_emu *emu);
struct rocemu_mm *rocemu_mm_get(struct rocemu_mm *mm);
void rocemu_mm_put(struct rocemu_mm *mm);

/*
 * Copy bytes between our local iovecs and [addr, addr + bytes) of mm
 * through /proc/PID/mem (write: into mm). 0, -ESRCH when the address
 * space is gone (its process exited or exec'd), -EFAULT when the range is
 * not all mapped.
 */
int rocemu_mm_copy(const struct rocemu_mm *mm, const struct iovec *local, unsigned int nlocal,
		   uint64_t addr, size_t bytes, bool write);

#endif /* ROCEMU_EMULATOR_MM_H */
