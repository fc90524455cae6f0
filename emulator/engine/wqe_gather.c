/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/engine/wqe_gather.h"

#include <errno.h>
#include <string.h>

#include "emulator/core/client.h"
#include "emulator/mem/dma.h"
#include "emulator/obj/qp.h"

int rocemu_wqe_gather_segs(const struct rocemu_qp *qp, const struct rocemu_send_wqe *w,
			   uint32_t off, uint32_t len, const struct iovec *local, unsigned int nlocal,
			   struct iovec *rest, unsigned int *nrest, struct rocemu_dma_seg *remote,
			   unsigned int max, unsigned int *nremote)
{
	unsigned int i = 0;
	size_t at = 0;		/* bytes of local[i] filled */

	*nrest = 0;
	*nremote = 0;
	if (nlocal > ROCEMU_GATHER_MAX_IOV)
		return -EINVAL;
	/* The inline bytes, copied out of the WQE when it was parsed. */
	while (len && off < w->inline_len && i < nlocal) {
		size_t chunk = local[i].iov_len - at;

		if (chunk > w->inline_len - off)
			chunk = w->inline_len - off;
		if (chunk > len)
			chunk = len;
		memcpy((uint8_t *)local[i].iov_base + at, w->inline_data + off, chunk);
		off += (uint32_t)chunk;
		len -= (uint32_t)chunk;
		at += chunk;
		if (at == local[i].iov_len) {
			i++;
			at = 0;
		}
	}
	if (!len)
		return 0;
	/* The rest from the SGEs, into the slots from where the inline bytes ended. */
	for (; i < nlocal; i++, at = 0)
		rest[(*nrest)++] = (struct iovec){ (uint8_t *)local[i].iov_base + at,
						   local[i].iov_len - at };
	return rocemu_dma_sgl(qp->mem, w->sge, w->num_sge, off - w->inline_len, len,
			      0, remote, max, nremote);
}

int rocemu_wqe_gather(const struct rocemu_qp *qp, const struct rocemu_send_wqe *w, uint32_t off,
		      uint32_t len, const struct iovec *local, unsigned int nlocal)
{
	struct rocemu_dma_seg remote[ROCEMU_DMA_MAX_SEGS];
	struct iovec rest[ROCEMU_GATHER_MAX_IOV];
	unsigned int nrest, n;
	int err = rocemu_wqe_gather_segs(qp, w, off, len, local, nlocal, rest, &nrest, remote,
					 ROCEMU_DMA_MAX_SEGS, &n);

	return err ? err : rocemu_dma_copy(qp->mem.client->mm, rest, nrest, remote, n,
					   false);
}
