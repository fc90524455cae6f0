/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * mlx5's vendor create flags of a QP, as the kernel's process_vendor_flags
 * takes them, and scatter to CQE (the QP context's cs_res and cs_req): a
 * ConnectX writes the data of a small received SEND, or of a small READ
 * or atomic reply, into the CQE instead of the buffers, and the driver's
 * poll copies it to the buffers its WQE names.
 */
#ifndef ROCEMU_EMULATOR_CQE_SCATTER_H
#define ROCEMU_EMULATOR_CQE_SCATTER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "emulator/mem/dma.h"
#include "emulator/engine/wqe.h"
#include "rocemu/ctrl.h"

struct rocemu_qp;

/* The most data a CQE carries: the first half of a 128-byte CQE. */
#define ROCEMU_CQE_SCATTER_MAX 64u

/*
 * The kernel's answer to vendor flags for a QP of this type: -EINVAL for
 * an unknown flag or packet-based credits on a QP that is not RC; the
 * scatter flags are taken by every type (and ignored where they mean nothing).
 */
int rocemu_qp_vendor_check(const struct rocemu_create_qp_req *req);

/*
 * Set cs_res and cs_req of a new qp from its vendor flags, type,
 * sq_sig_all and CQs: qp->cqe_scatter_res, the bytes of a received SEND
 * its receive CQEs may carry, and qp->cqe_scatter_req, those of a READ or
 * atomic reply its requester CQEs may carry (0, 32 or 64).
 */
void rocemu_cqe_scatter_setup(struct rocemu_qp *qp, uint32_t vendor_flags);

/*
 * The driver's copy out of a CQE reaches what the DMA engine resolved the
 * SGEs at offset 0 to (segs, one per non-empty SGE): each in the polling
 * process's address space mm at the address its SGE names, and still the
 * memory registered there. Not so for device memory, zero-based MRs or
 * another process's MR: their data goes by DMA.
 */
bool rocemu_cqe_scatter_reachable(const struct rocemu_mm *mm, const struct rocemu_sge *sge, unsigned int nsge,
				  const struct rocemu_dma_seg *segs, unsigned int n);

#endif /* ROCEMU_EMULATOR_CQE_SCATTER_H */
