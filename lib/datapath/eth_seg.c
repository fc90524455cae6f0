/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The Ethernet segment of a RAW_PACKET QP's send WQE, as libmlx5's
 * post_send writes it after ctrl: checksum flags, and the frame's first
 * ROCEMU_ETH_INLINE_HEADER bytes copied inline from its data (the data
 * segments then go on after them, copy_eth_inline_headers), or for TSO
 * the mss and the whole header given with the work request
 * (set_tso_eth_seg).
 */
#include "lib/shim.h"

#include <stddef.h>
#include <string.h>

/* The inline bytes run from inline_hdr_start on through inline_hdr and, for TSO, past the segment. */
#define INLINE_AT offsetof(struct mlx5_wqe_eth_seg, inline_hdr_start)

/* mlx5: the frame's first 18 bytes from the data; fewer is EINVAL. */
static int eth_inline_start(const struct rocemu_wqe *wqe, struct rocemu_data_start *from)
{
	size_t i, len, need = ROCEMU_ETH_INLINE_HEADER;
	const void *addr;

	for (i = 0; i < wqe->num; i++) {
		len = rocemu_wqe_elem(wqe, i, &addr);
		if (len > need) {
			*from = (struct rocemu_data_start){ i, need };
			return 0;
		}
		need -= len;
		if (!need) {
			*from = (struct rocemu_data_start){ i + 1, 0 };
			return 0;
		}
	}
	return EINVAL;
}

/* mlx5: a TSO WQE's SGEs carry at most max_tso bytes, 0 before the port is set. */
static int tso_data_check(const struct rocemu_qp *qp, const struct rocemu_wqe *wqe, bool inl)
{
	uint64_t total = 0;
	size_t i;

	if (inl)
		return 0;	/* mlx5 counts SGEs only */
	for (i = 0; i < wqe->num; i++) {
		total += wqe->sge[i].length;
		if (wqe->sge[i].length && total > qp->max_tso)
			return EINVAL;
	}
	return 0;
}

int rocemu_eth_seg_check(const struct rocemu_qp *qp, const struct rocemu_wqe *wqe, bool inl,
			 struct rocemu_data_start *from, uint32_t *eth_ds)
{
	if ((wqe->flags & IBV_SEND_IP_CSUM) && !qp->raw_csum)
		return EINVAL;
	if (wqe->opcode != IBV_WR_TSO) {
		*eth_ds = rocemu_wqe_eth_seg_bytes(ROCEMU_ETH_INLINE_HEADER) / ROCEMU_WQE_SEG;
		return eth_inline_start(wqe, from);
	}
	if (wqe->tso_hdr_sz < ROCEMU_ETH_MIN_HEADER || wqe->tso_hdr_sz > qp->max_tso_header)
		return EINVAL;
	*from = (struct rocemu_data_start){ 0, 0 };
	*eth_ds = rocemu_wqe_eth_seg_bytes(wqe->tso_hdr_sz) / ROCEMU_WQE_SEG;
	return tso_data_check(qp, wqe, inl);
}

/* The first 18 bytes of the frame, from as many elements as hold them (checked before). */
static void eth_inline_copy(uint8_t *dst, const struct rocemu_wqe *wqe)
{
	size_t i, len, left = ROCEMU_ETH_INLINE_HEADER;
	const void *addr;

	for (i = 0; left; i++) {
		len = rocemu_wqe_elem(wqe, i, &addr);
		len = len < left ? len : left;
		memcpy(dst, addr, len);
		dst += len;
		left -= len;
	}
}

void *rocemu_eth_seg_write(const struct rocemu_sq *sq, void *seg, const struct rocemu_wqe *wqe,
			   uint32_t eth_ds)
{
	struct mlx5_wqe_eth_seg *eseg = seg;	/* right after ctrl: it fits the first BB */
	char *end = (char *)seg + (size_t)eth_ds * ROCEMU_WQE_SEG;

	memset(eseg, 0, sizeof(*eseg));
	if (wqe->flags & IBV_SEND_IP_CSUM)
		eseg->cs_flags = MLX5_ETH_WQE_L3_CSUM | MLX5_ETH_WQE_L4_CSUM;
	if (wqe->opcode == IBV_WR_TSO) {
		eseg->mss = htobe16(wqe->tso_mss);
		eseg->inline_hdr_sz = htobe16(wqe->tso_hdr_sz);
		rocemu_sq_copy(sq, (char *)eseg + INLINE_AT, wqe->tso_hdr, wqe->tso_hdr_sz);
	} else {
		eseg->inline_hdr_sz = htobe16(ROCEMU_ETH_INLINE_HEADER);
		eth_inline_copy((uint8_t *)eseg + INLINE_AT, wqe);
	}
	/* A long TSO header goes on at BB 0. */
	return end >= sq->qend ? sq->buf + (end - sq->qend) : end;
}
