/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * mlx5dv_wr_raw_wqe (MLX5DV_QP_EX_WITH_RAW_WQE, any QP type): the caller's
 * WQE, its ctrl segment's opcode, fence, completion and solicited bits,
 * imm and ds as it wrote them, goes into the SQ at the next index, as
 * libmlx5's mlx5_wr_raw_wqe copies it; its completion reads as
 * IBV_WC_DRIVER2 (lib/datapath/poll.c).
 */
#include "lib/shim.h"
#include "lib/dv/dv.h"

#include <string.h>

static void wr_raw_wqe(struct mlx5dv_qp_ex *mqp, const void *wqe)
{
	struct rocemu_qp *qp = container_of(mqp, struct rocemu_qp, dv_qpx);
	struct mlx5_wqe_ctrl_seg ctrl;
	unsigned int flags;
	uint8_t ds;
	int err;

	if (qp->sq.batch_err)
		return;
	memcpy(&ctrl, wqe, sizeof(ctrl));
	ds = be32toh(ctrl.qpn_ds) & ROCEMU_WQE_DS_MASK;
	/* Another WQE still waiting for its setters, or no ctrl segment. */
	if (qp->sq.wr_pending || !ds) {
		rocemu_sq_batch_fail(&qp->sq, EINVAL);
		return;
	}
	flags = ctrl.fm_ce_se & MLX5_WQE_CTRL_CQ_UPDATE ? IBV_SEND_SIGNALED : 0;
	err = rocemu_sq_write_segs(qp, (uint8_t)be32toh(ctrl.opmod_idx_opcode),
				   ctrl.fm_ce_se & (uint8_t)~MLX5_WQE_CTRL_CQ_UPDATE, ctrl.imm,
				   (const char *)wqe + sizeof(ctrl), (size_t)(ds - 1) * ROCEMU_WQE_SEG,
				   qp->qpx.wr_id, flags, ROCEMU_WR_RAW_WQE);
	if (err)
		rocemu_sq_batch_fail(&qp->sq, err);
}

void rocemu_dv_raw_wqe_enable(struct ibv_qp *ibqp)
{
	struct rocemu_qp *qp = to_rqp(ibqp);

	qp->sq.raw_wqes = true;
	qp->dv_qpx.wr_raw_wqe = wr_raw_wqe;
}
