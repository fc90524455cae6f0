/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * mmap(2) of a ConnectX-3 context's cmd_fd, as an mlx4dv program maps its
 * doorbells: a QP's UAR page at the uar_mmap_offset mlx4dv_init_obj gave,
 * its BlueFlame page one page on (libmlx4 maps the context's UAR at 0 and
 * BlueFlame at one page). Each QP has its own pair in its memfd; a page
 * mapped here is that memfd's page, so the daemon sees what is written.
 */
#include "lib/shim.h"

#include <sys/mman.h>

static pthread_mutex_t contexts_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rocemu_context *contexts;		/* cx3 contexts, by uar_next */
static unsigned int context_count;		/* read unlocked: mmap's fast way out */

void rocemu_mlx4_uar_register(struct rocemu_context *rctx)
{
	pthread_mutex_lock(&contexts_lock);
	rctx->uar_next = contexts;
	contexts = rctx;
	__atomic_store_n(&context_count, context_count + 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&contexts_lock);
}

void rocemu_mlx4_uar_unregister(struct rocemu_context *rctx)
{
	struct rocemu_context **p;

	pthread_mutex_lock(&contexts_lock);
	for (p = &contexts; *p; p = &(*p)->uar_next)
		if (*p == rctx) {
			*p = rctx->uar_next;
			__atomic_store_n(&context_count, context_count - 1, __ATOMIC_RELEASE);
			break;
		}
	pthread_mutex_unlock(&contexts_lock);
}

/* The memfd page of the QP of rctx that offset names, or NULL. */
static void *qp_page(struct rocemu_context *rctx, off_t offset)
{
	long page = sysconf(_SC_PAGESIZE);
	uint64_t index = (uint64_t)offset / (uint64_t)page;
	uint64_t qpn = (index - ROCEMU_MLX4_UAR_FIRST_PAGE) / 2;
	struct rocemu_qp *qp;

	if (offset % page || index < ROCEMU_MLX4_UAR_FIRST_PAGE || qpn >= 1u << 24)
		return NULL;
	qp = rocemu_qp_table_find(rctx, (uint32_t)qpn);
	if (!qp || qp->qpn != qpn || !qp->map || qp->layout.bf_size < 2 * (uint64_t)page)
		return NULL;
	return (uint8_t *)qp->map + qp->layout.bf_offset + ((index - ROCEMU_MLX4_UAR_FIRST_PAGE) % 2) * page;
}

bool rocemu_mlx4_uar_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t offset,
			  void **mapped)
{
	struct rocemu_context *rctx;
	void *page = NULL, *p;

	if (!__atomic_load_n(&context_count, __ATOMIC_ACQUIRE))
		return false;
	pthread_mutex_lock(&contexts_lock);
	for (rctx = contexts; rctx && rctx->vctx.context.cmd_fd != fd; rctx = rctx->uar_next)
		;
	if (rctx)
		page = qp_page(rctx, offset);
	pthread_mutex_unlock(&contexts_lock);
	if (!rctx)
		return false;
	/* As mlx4_ib_mmap: one page, shared, of a page it knows; anything else EINVAL. */
	if (!page || len != (size_t)sysconf(_SC_PAGESIZE) || !(flags & MAP_SHARED)) {
		errno = EINVAL;
		*mapped = MAP_FAILED;
		return true;
	}
	/* A second mapping of the same memfd page (old size 0 on a shared mapping). */
	p = (flags & MAP_FIXED) ? mremap(page, 0, len, MREMAP_MAYMOVE | MREMAP_FIXED, addr)
				: mremap(page, 0, len, MREMAP_MAYMOVE);
	if (p != MAP_FAILED && mprotect(p, len, prot)) {
		munmap(p, len);
		p = MAP_FAILED;
	}
	*mapped = p;
	return true;
}
