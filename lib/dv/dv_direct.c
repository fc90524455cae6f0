/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * What mlx5dv_init_obj and mlx4dv_init_obj share: the daemon is told of
 * each QP and CQ handed out, since the program will ring their doorbells
 * without the shim (emulator/sched/direct.c), with a userfaultfd over the
 * pages they are written in where the kernel gives one, and a CQ's
 * doorbell register is a page nobody reads.
 */
#include "lib/shim.h"
#include "lib/dv/dv.h"

#include <errno.h>
#include <linux/userfaultfd.h>
#include <string.h>
#include <sys/ioctl.h>

#include "rocemu/log.h"

uint64_t rocemu_dv_cq_uar_sink[4096 / sizeof(uint64_t)] __attribute__((aligned(4096)));

/*
 * A userfaultfd of this process over the pages from first to end, for
 * write protection, or -1 where the kernel offers none to us (old, or a
 * sandbox that forbids the call): the daemon then polls those pages.
 */
static int doorbell_uffd(const void *first, const void *end, struct rocemu_direct_doorbells_req *req)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t start = (uintptr_t)first & ~(page - 1);
	uintptr_t stop = ((uintptr_t)end + page - 1) & ~(page - 1);
	struct uffdio_register reg = { .range = { .start = start, .len = stop - start },
				       .mode = UFFDIO_REGISTER_MODE_WP };
	int fd;

	if (!first || stop <= start)
		return -1;
	fd = rocemu_uffd_open(UFFD_FEATURE_WP_HUGETLBFS_SHMEM);
	if (fd < 0)
		return -1;
	if (ioctl(fd, UFFDIO_REGISTER, &reg) ||
	    !(reg.ioctls & (1ull << _UFFDIO_WRITEPROTECT))) {
		rocemu_log(ROCEMU_LOG_DEBUG, "direct doorbells polled: userfaultfd: %s", strerror(errno));
		close(fd);
		return -1;
	}
	req->wp_addr = start;
	req->wp_len = stop - start;
	return fd;
}

int rocemu_dv_direct_doorbells(struct ibv_context *context, bool *told,
			       enum rocemu_direct_kind kind, uint32_t handle,
			       const void *db_first, const void *db_end)
{
	struct rocemu_direct_doorbells_req req = { .kind = kind, .handle = handle };
	int err, fd;

	if (__atomic_load_n(told, __ATOMIC_ACQUIRE))
		return 0;
	fd = doorbell_uffd(db_first, db_end, &req);
	err = rocemu_conn_call_fd(&to_rctx(context)->conn, ROCEMU_OP_DIRECT_DOORBELLS, &req, NULL,
				  fd);
	/* The daemon's copy is the only one: were it gone, a faulting write would not wait on it. */
	if (fd >= 0)
		close(fd);
	if (err)
		return -err;
	__atomic_store_n(told, true, __ATOMIC_RELEASE);
	return 0;
}
