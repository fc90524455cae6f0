/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The DMA engine: memory of a client reached through its MRs and windows.
 * Every access is checked (key, PD, access rights, bounds in the key's
 * iova space: rocemu_mkey_resolve) before it happens; only then
 * process_vm_readv/writev moves the bytes, in batches of at most IOV_MAX
 * iovecs per call.
 *
 * Errors, distinct so callers map them to NAKs and CQE syndromes:
 *   -ENOKEY, -EPERM, -EACCES, -ERANGE  as rocemu_mkey_resolve (emulator/mkey.h)
 *   -EMSGSIZE  more bytes than the SGE list holds
 *   -EFAULT  the copy itself failed (memory unmapped meanwhile)
 *   -ESRCH   the copy found the owner process gone (exited, a zombie)
 */
#ifndef ROCEMU_EMULATOR_DMA_H
#define ROCEMU_EMULATOR_DMA_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "emulator/wqe.h"

struct rocemu_qp;

/*
 * Check remote access to [va, va + len) through rkey, an MR's or a
 * window's, for target QP qp (in qp's PD, allowing access,
 * IBV_ACCESS_REMOTE_*). On success *addr is the address in qp's owner's
 * memory.
 */
int rocemu_dma_rkey(const struct rocemu_qp *qp, uint32_t rkey, uint64_t va, uint64_t len,
		    unsigned int access, uint64_t *addr);

/*
 * Check bytes [offset, offset + len) of qp's local SGE list (lkeys of
 * qp's client and PD; access 0 to read, IBV_ACCESS_LOCAL_WRITE to
 * write) and turn them into at most max iovecs in remote (*n of them).
 */
int rocemu_dma_sgl(const struct rocemu_qp *qp, const struct rocemu_sge *sge, unsigned int nsge,
		   uint64_t offset, uint64_t len, unsigned int access, struct iovec *remote,
		   unsigned int max, unsigned int *n);

/*
 * Copy between our local iovecs and checked remote iovecs of process
 * pid (to_remote: write there). Both lists hold the same byte count.
 * Returns 0, -ESRCH when pid is gone, or -EFAULT.
 */
int rocemu_dma_copy(pid_t pid, const struct iovec *local, unsigned int nlocal,
		    const struct iovec *remote, unsigned int nremote, bool to_remote);

#endif /* ROCEMU_EMULATOR_DMA_H */
