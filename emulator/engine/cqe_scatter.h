/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Scatter to CQE: a ConnectX writes the data of a small received SEND, or
 * of a small READ or atomic reply, into the CQE instead of the buffers,
 * and the driver's poll copies it to the buffers its WQE names. A QP's
 * vendor flags say how much (qp_vendor_flags.h); here, whether the
 * driver's copy would reach the memory the data is for.
 */
#ifndef ROCEMU_EMULATOR_CQE_SCATTER_H
#define ROCEMU_EMULATOR_CQE_SCATTER_H

#include <stdbool.h>

#include "emulator/mem/dma.h"

/* The most data a CQE carries: the first half of a 128-byte CQE. */
#define ROCEMU_CQE_SCATTER_MAX 64u

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
