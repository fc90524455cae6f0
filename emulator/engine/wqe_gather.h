/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The data of a parsed send WQE as the device gathers it: its inline bytes
 * from the WQE, then its SGEs by DMA from the program's memory, in that
 * order, as ConnectX reads mixed inline and pointer segments.
 */
#ifndef ROCEMU_EMULATOR_WQE_GATHER_H
#define ROCEMU_EMULATOR_WQE_GATHER_H

#include <stdint.h>
#include <sys/uio.h>

#include "emulator/ring/format.h"
#include "emulator/mem/dma.h"

/* Most local slots one gather fills (a GSO batch of packets). */
#define ROCEMU_GATHER_MAX_IOV 64u

/*
 * Fill local (nlocal slots holding len bytes in all) with bytes
 * [off, off + len) of w's data, the SGEs read from qp's memory owner.
 * Returns 0, -EINVAL (too many slots) or what rocemu_dma_sgl and
 * rocemu_dma_copy return.
 */
int rocemu_wqe_gather(const struct rocemu_qp *qp, const struct rocemu_send_wqe *w, uint32_t off,
		      uint32_t len, const struct iovec *local, unsigned int nlocal);

/*
 * The first half of rocemu_wqe_gather, for a caller that reads several
 * gathers at once: the inline bytes copied into local, the slots left for
 * the SGEs' bytes in rest (at most nlocal), the SGEs' memory in remote (at
 * most max). Returns 0, -EINVAL (too many slots) or what rocemu_dma_sgl returns.
 */
int rocemu_wqe_gather_segs(const struct rocemu_qp *qp, const struct rocemu_send_wqe *w,
			   uint32_t off, uint32_t len, const struct iovec *local, unsigned int nlocal,
			   struct iovec *rest, unsigned int *nrest, struct rocemu_dma_seg *remote,
			   unsigned int max, unsigned int *nremote);

#endif /* ROCEMU_EMULATOR_WQE_GATHER_H */
