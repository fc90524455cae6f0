/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/obj/qp_layout.h"

#include <errno.h>
#include <string.h>

#include "emulator/base/shm.h"
#include "emulator/core/device.h"
#include "rocemu/ring.h"

#define DBREC_BYTES 64

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

int rocemu_qp_layout(const struct rocemu_ring_format *f, const struct ibv_qp_cap *want,
		     enum ibv_qp_type type, uint32_t max_tso_header, uint32_t inl_recv_sz,
		     struct ibv_qp_cap *granted, struct rocemu_qp_layout *layout)
{
	struct rocemu_wq_sizes sizes;
	uint64_t sq_bytes, rq_bytes;

	if (want->max_send_wr > ROCEMU_MAX_QP_WR || want->max_recv_wr > ROCEMU_MAX_QP_WR ||
	    want->max_send_sge > ROCEMU_MAX_SGE || want->max_recv_sge > ROCEMU_MAX_SGE ||
	    want->max_inline_data > ROCEMU_MAX_INLINE)
		return -EINVAL;
	/* The contract's rule: a send queue of more BBs than its counters tell apart is EINVAL. */
	if (f->wq_size(want, type, max_tso_header, inl_recv_sz, &sizes))
		return -EINVAL;
	f->wq_caps(&sizes, type, granted);
	granted->max_send_sge = min_u32(granted->max_send_sge, ROCEMU_MAX_SGE);
	granted->max_inline_data = min_u32(granted->max_inline_data, ROCEMU_MAX_INLINE);
	/* The stride may have room for more; the daemon scatters into max_sge, so the shim may post no more. */
	granted->max_recv_sge = min_u32(granted->max_recv_sge, ROCEMU_MAX_SGE);

	memset(layout, 0, sizeof(*layout));
	layout->sq_wqe_cnt = sizes.sq_bbs;
	layout->rq_wqe_cnt = sizes.rq_wqes;
	layout->rq_wqe_shift = sizes.rq_wqe_shift;
	layout->sq_wqe_shift = sizes.sq_wqe_shift;
	sq_bytes = (uint64_t)layout->sq_wqe_cnt << layout->sq_wqe_shift;
	rq_bytes = (uint64_t)layout->rq_wqe_cnt << layout->rq_wqe_shift;
	layout->sq_offset = 0;
	layout->rq_offset = rocemu_page_align(sq_bytes);
	layout->dbrec_offset = rocemu_page_align(layout->rq_offset + rq_bytes);
	layout->bf_offset = layout->dbrec_offset + DBREC_BYTES;
	/* Doorbell pages (a ConnectX-3's UAR and BlueFlame) start on a page: programs map them. */
	if (rocemu_page_align(f->bf_size) == f->bf_size)
		layout->bf_offset = rocemu_page_align(layout->bf_offset);
	layout->bf_size = f->bf_size;
	layout->size = rocemu_page_align(layout->bf_offset + f->bf_size);
	return 0;
}
