/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Memory keys: the one place an lkey or rkey becomes an MR, and a window
 * when it is a window's rkey, with every check its use asks for. The DMA
 * engine, window binds (for the MR they open onto) and invalidation all
 * resolve keys here.
 *
 * Errors, distinct so callers map them to NAKs and CQE syndromes:
 *   -ENOKEY  no such key for the owner: unknown, another ufile's,
 *            invalidated, an unbound window, a window key used as an lkey
 *   -EPERM   another PD than the owner's, or a type 2 window bound to another QP
 *   -EACCES  the rights asked are not all granted
 *   -ERANGE  [va, va + len) is not inside the window and its MR
 */
#ifndef ROCEMU_EMULATOR_MKEY_H
#define ROCEMU_EMULATOR_MKEY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct rocemu_client;
struct rocemu_pd;
struct rocemu_mm;
struct rocemu_mr;
struct rocemu_mw;

/*
 * Whom memory is reached for through keys (a QP carries its own: qp->mem):
 * the client whose ufile holds the keys and whose address space copies
 * reach, the PD they must be in, and the QP's number (a type 2 window is
 * bound to one QP).
 */
struct rocemu_mem_owner {
	struct rocemu_client *client;
	const struct rocemu_pd *pd;
	uint32_t qpn;
};

enum rocemu_mkey_use {
	ROCEMU_MKEY_LOCAL,	/* an lkey of the owner: a valid MR, rights and bounds */
	ROCEMU_MKEY_REMOTE,	/* an rkey for it: a valid MR or bound window, rights, bounds */
	ROCEMU_MKEY_INVALIDATE,	/* an MR or window to invalidate: its client and PD only */
};

/*
 * An indirect mkey (mr->indirect) resolves as an MR whose iova space is
 * its zero-based layout: addr is then the offset into the layout, which
 * the DMA engine (dma.c) walks into memory.
 */
struct rocemu_mkey_ref {
	struct rocemu_mr *mr;	/* NULL only for an unbound window to invalidate */
	struct rocemu_mw *mw;	/* the window, or NULL for the MR's own key */
	uint64_t addr;		/* of va in mm (LOCAL, REMOTE) */
	struct rocemu_mm *mm;	/* the address space the MR covers */
	uint64_t gen;		/* the MR's generation there (mm_watch.h) */
};

/*
 * Resolve key for owner as use asks; access is IBV_ACCESS_* rights that
 * must all be granted (LOCAL, REMOTE). Returns 0 with *ref filled, or -errno.
 */
int rocemu_mkey_resolve(struct rocemu_mem_owner owner, uint32_t key, enum rocemu_mkey_use use,
			uint64_t va, uint64_t len, unsigned int access, struct rocemu_mkey_ref *ref);

/*
 * An lkey of client c to prefetch [va, va + len) through, as mlx5's
 * get_prefetchable_mr and pagefault_mr check it: an ODP MR of c
 * (-ENOENT otherwise, a plain MR too), in pd (-EPERM), writable when
 * write (-EPERM), holding the range (-EFAULT). *addr: va in c's memory.
 */
int rocemu_mkey_prefetch(const struct rocemu_client *c, const struct rocemu_pd *pd, uint32_t lkey,
			 uint64_t va, uint64_t len, bool write, uint64_t *addr);

#endif /* ROCEMU_EMULATOR_MKEY_H */
