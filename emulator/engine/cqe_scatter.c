/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/engine/cqe_scatter.h"

bool rocemu_cqe_scatter_reachable(const struct rocemu_mm *mm, const struct rocemu_sge *sge, unsigned int nsge,
				  const struct rocemu_dma_seg *segs, unsigned int n)
{
	unsigned int i = 0;

	for (unsigned int k = 0; k < n; k++, i++) {
		while (i < nsge && !sge[i].length)
			i++;
		if (i == nsge || segs[k].mm != mm ||
		    (uintptr_t)segs[k].iov.iov_base != sge[i].addr)
			return false;
	}
	return rocemu_dma_segs_reachable(segs, n);
}
