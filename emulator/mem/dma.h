/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The DMA engine: memory reached through MRs and windows: the registering
 * process's (an imported MR's may be another process than the QP's) or,
 * for device memory, the daemon's own.
 * Every access is checked (key, PD, access rights, bounds in the key's
 * iova space: rocemu_mkey_resolve; an indirect mkey's range walked and
 * each piece resolved through its entry's lkey) before it happens, and
 * again at the copy against what the process unmapped since
 * (mm_watch.h); only then do the bytes move: by pid through the address
 * space's guard (mm_guard.h), one call per run of segments of one address space, else
 * through its /proc/PID/mem (mm.h).
 *
 * Errors, distinct so callers map them to NAKs and CQE syndromes:
 *   -ENOKEY, -EPERM, -EACCES, -ERANGE  as rocemu_mkey_resolve (emulator/mem/mkey.h)
 *   -EMSGSIZE  more bytes than the SGE list holds
 *   -EFAULT  the copy itself failed (memory unmapped meanwhile)
 *   -ESRCH   the copy found the QP's own address space gone (exited, exec'd)
 */
#ifndef ROCEMU_EMULATOR_DMA_H
#define ROCEMU_EMULATOR_DMA_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "emulator/mem/mkey.h"

struct rocemu_mm;

/* One scatter/gather element: an address in the key's iova space. */
struct rocemu_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t key;
};

/* Checked memory: iov in address space mm, as its MR had it at generation gen (mm_watch.h). */
struct rocemu_dma_seg {
	struct iovec iov;
	struct rocemu_mm *mm;
	uint64_t gen;
};

/* Segments one packet's data may take: SGEs, each perhaps an indirect key of many pieces. */
#define ROCEMU_DMA_MAX_SEGS 256

/*
 * Check remote access to [va, va + len) through rkey, an MR's, a
 * window's or an indirect mkey's, for owner (a target QP's: in its PD,
 * allowing access, IBV_ACCESS_REMOTE_*), and turn it into at most max
 * segments in remote (*n of them; -EMSGSIZE past max). remote NULL: check only.
 */
int rocemu_dma_rkey(struct rocemu_mem_owner owner, uint32_t rkey, uint64_t va, uint64_t len,
		    unsigned int access, struct rocemu_dma_seg *remote, unsigned int max,
		    unsigned int *n);

/*
 * Check bytes [offset, offset + len) of owner's local SGE list (lkeys of
 * its ufile and PD; access 0 to read, IBV_ACCESS_LOCAL_WRITE to write)
 * and turn them into at most max segments in remote (*n of them).
 * remote NULL: check only.
 */
int rocemu_dma_sgl(struct rocemu_mem_owner owner, const struct rocemu_sge *sge, unsigned int nsge,
		   uint64_t offset, uint64_t len, unsigned int access, struct rocemu_dma_seg *remote,
		   unsigned int max, unsigned int *n);

/* Is each of segs still the memory its MR registered (no unmap reported since)? */
bool rocemu_dma_segs_reachable(const struct rocemu_dma_seg *segs, unsigned int n);

/*
 * Copy between our local iovecs and checked remote segments (to_remote:
 * write there). Both lists hold the same byte count. Returns 0, -ESRCH
 * when address space owner (the QP's process's) is gone, or -EFAULT, also
 * for memory unmapped since its MR was registered and for another address
 * space that is gone.
 */
int rocemu_dma_copy(const struct rocemu_mm *owner, const struct iovec *local, unsigned int nlocal,
		    const struct rocemu_dma_seg *remote, unsigned int nremote, bool to_remote);

#endif /* ROCEMU_EMULATOR_DMA_H */
