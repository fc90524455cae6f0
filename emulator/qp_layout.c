/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/qp_layout.h"

#include <errno.h>
#include <string.h>
#include <infiniband/mlx5dv.h>

#include "emulator/device.h"
#include "emulator/shm.h"

#define SQ_BB 64		/* MLX5_SEND_WQE_BB */
#define DATA_SEG 16		/* struct mlx5_wqe_data_seg */
#define DBREC_BYTES 64

static uint32_t next_pow2(uint32_t v)
{
	uint32_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

static uint32_t align_up(uint32_t v, uint32_t a)
{
	return (v + a - 1) & ~(a - 1);
}

static uint32_t ilog2(uint32_t v)
{
	uint32_t l = 0;

	while ((1u << (l + 1)) <= v)
		l++;
	return l;
}

int rocemu_qp_layout(const struct ibv_qp_cap *want, struct ibv_qp_cap *granted,
		     struct rocemu_qp_layout *layout)
{
	uint32_t sq_wqe, inline_seg, data, bbs, rq_stride;
	uint64_t sq_bytes, rq_bytes;

	if (want->max_send_wr > ROCEMU_MAX_QP_WR || want->max_recv_wr > ROCEMU_MAX_QP_WR ||
	    want->max_send_sge > ROCEMU_MAX_SGE || want->max_recv_sge > ROCEMU_MAX_SGE ||
	    want->max_inline_data > ROCEMU_MAX_INLINE)
		return -EINVAL;

	/* SQ WQE: ctrl + raddr segments, then data segments or inline data (4-byte header). */
	data = want->max_send_sge * DATA_SEG;
	inline_seg = align_up(4 + want->max_inline_data, 16);
	sq_wqe = align_up(sizeof(struct mlx5_wqe_ctrl_seg) + sizeof(struct mlx5_wqe_raddr_seg) +
			  (data > inline_seg ? data : inline_seg), SQ_BB);
	bbs = sq_wqe / SQ_BB;
	memset(layout, 0, sizeof(*layout));
	layout->sq_wqe_cnt = want->max_send_wr ? next_pow2(want->max_send_wr * bbs) : 0;
	granted->max_send_wr = layout->sq_wqe_cnt / bbs;
	granted->max_send_sge = (sq_wqe - 32) / DATA_SEG;
	if (granted->max_send_sge > ROCEMU_MAX_SGE)
		granted->max_send_sge = ROCEMU_MAX_SGE;
	granted->max_inline_data = sq_wqe - 32 - 4;
	if (granted->max_inline_data > ROCEMU_MAX_INLINE)
		granted->max_inline_data = ROCEMU_MAX_INLINE;

	/* RQ WQE: data segments only, a power-of-two stride. */
	rq_stride = next_pow2(want->max_recv_sge * DATA_SEG > 16 ? want->max_recv_sge * DATA_SEG : 16);
	layout->rq_wqe_shift = ilog2(rq_stride);
	layout->rq_wqe_cnt = want->max_recv_wr ? next_pow2(want->max_recv_wr) : 0;
	granted->max_recv_wr = layout->rq_wqe_cnt;
	granted->max_recv_sge = rq_stride / DATA_SEG;

	sq_bytes = (uint64_t)layout->sq_wqe_cnt * SQ_BB;
	rq_bytes = (uint64_t)layout->rq_wqe_cnt << layout->rq_wqe_shift;
	layout->sq_offset = 0;
	layout->rq_offset = rocemu_page_align(sq_bytes);
	layout->dbrec_offset = rocemu_page_align(layout->rq_offset + rq_bytes);
	layout->bf_offset = layout->dbrec_offset + DBREC_BYTES;
	layout->bf_size = ROCEMU_BF_SIZE;
	layout->size = rocemu_page_align(layout->bf_offset + ROCEMU_BF_SIZE);
	return 0;
}
