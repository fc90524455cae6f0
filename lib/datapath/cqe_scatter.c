/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Scatter to CQE on the poller's side: a ConnectX may write the data of a
 * small received SEND, or of a small READ or atomic reply, into the CQE
 * (op_own's MLX5_INLINE_SCATTER_32: the CQE's first 32 bytes;
 * _SCATTER_64: the 64 bytes before it in a 128-byte CQE), and the driver
 * copies it to the buffers of the WQE the CQE names, as mlx5's
 * mlx5_copy_to_recv_wqe, mlx5_copy_to_recv_srq and mlx5_copy_to_send_wqe
 * do. The daemon checked those buffers' keys and room before it wrote the CQE.
 */
#include "lib/shim.h"

#include <string.h>

const void *rocemu_cqe_scatter_data(const struct mlx5_cqe64 *cqe)
{
	if (cqe->op_own & MLX5_INLINE_SCATTER_32)
		return cqe;
	if (cqe->op_own & MLX5_INLINE_SCATTER_64)
		return cqe - 1;
	return NULL;
}

/*
 * Copy len bytes into the data segments [scat, end), wrapping at ring_end
 * to ring (a send WQE may wrap), as mlx5's copy_to_scat: IBV_WC_LOC_LEN_ERR
 * when they hold less.
 */
static enum ibv_wc_status copy_to_scat(const char *scat, uint32_t nseg, const char *ring,
				       const char *ring_end, const uint8_t *data, uint32_t len)
{
	for (uint32_t i = 0; len && i < nseg; i++, scat += sizeof(struct mlx5_wqe_data_seg)) {
		const struct mlx5_wqe_data_seg *seg;
		uint32_t copy;

		if (scat == ring_end)
			scat = ring;
		seg = (const struct mlx5_wqe_data_seg *)scat;
		copy = be32toh(seg->byte_count);
		if (copy > len)
			copy = len;
		/* A receive WQE's terminator (address 0, no bytes) takes nothing: no memcpy to NULL. */
		if (!copy)
			continue;
		memcpy((void *)(uintptr_t)be64toh(seg->addr), data, copy);
		data += copy;
		len -= copy;
	}
	return len ? IBV_WC_LOC_LEN_ERR : IBV_WC_SUCCESS;
}

enum ibv_wc_status rocemu_cqe_scatter_to_rq(const struct rocemu_rq *rq, uint16_t wqe_counter,
					    const void *data, uint32_t len)
{
	const char *wqe = rq->buf + ((size_t)(wqe_counter & (rq->wqe_cnt - 1)) << rq->wqe_shift);

	return copy_to_scat(wqe, (1u << rq->wqe_shift) / sizeof(struct mlx5_wqe_data_seg), NULL,
			    NULL, data, len);
}

enum ibv_wc_status rocemu_cqe_scatter_to_srq(const struct rocemu_srq *srq, uint16_t wqe_index,
					     const void *data, uint32_t len)
{
	const char *wqe = srq->buf + ((size_t)wqe_index << srq->layout.wqe_shift);

	return copy_to_scat(wqe + sizeof(struct mlx5_wqe_srq_next_seg), srq->max_gs, NULL, NULL,
			    data, len);
}

enum ibv_wc_status rocemu_cqe_scatter_to_sq(const struct rocemu_qp *qp, uint16_t wqe_counter,
					    const void *data, uint32_t len)
{
	const struct rocemu_sq *sq = &qp->sq;
	const char *wqe = sq->buf + (size_t)(wqe_counter & (sq->wqe_cnt - 1)) * ROCEMU_WQE_BB;
	const struct mlx5_wqe_ctrl_seg *ctrl = (const struct mlx5_wqe_ctrl_seg *)wqe;
	const struct rocemu_wqe_op *op = rocemu_wqe_op(rocemu_wqe_ctrl_opcode(ctrl));
	uint32_t header = rocemu_wqe_op_header_ds(op), ds = rocemu_wqe_ctrl_ds(ctrl);
	const char *scat = wqe + (size_t)header * ROCEMU_WQE_SEG;

	/* Only READ and atomic replies come in a requester CQE (mlx5: REM_INV_REQ otherwise). */
	if (!rocemu_wqe_op_rd_atomic(op) || ds < header)
		return IBV_WC_REM_INV_REQ_ERR;
	if (scat >= sq->qend)
		scat = sq->buf + (scat - sq->qend);
	return copy_to_scat(scat, ds - header, sq->buf, sq->qend, data, len);
}
