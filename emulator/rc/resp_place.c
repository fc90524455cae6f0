/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * What the RC and UC responders share of a SEND or RDMA WRITE message:
 * the receive WQE it takes, the R_Key check of a WRITE's RETH, placing
 * each packet's data by DMA, the receive CQE at its end, and the error CQE
 * of its receive WQE when the responder fails the QP. The checks and
 * what each failure means (a NAK on RC, a dropped message on UC) stay
 * with each responder.
 */
#include <errno.h>
#include <string.h>
#include <infiniband/mlx5dv.h>

#include "emulator/cqe.h"
#include "emulator/dma.h"
#include "emulator/qp.h"
#include "emulator/rc/rc.h"
#include "emulator/srq.h"
#include "net/roce_hdr.h"

bool rocemu_resp_recv_ready(struct rocemu_qp *qp, struct rocemu_rc_resp *resp, uint32_t flags)
{
	bool needs_wqe = ((flags & ROCEMU_OPF_SEND) && (flags & ROCEMU_OPF_START)) ||
			 ((flags & ROCEMU_OPF_WRITE) && (flags & ROCEMU_OPF_IMM));

	if (!needs_wqe || resp->has_recv)
		return true;
	/* From the QP's receive queue or its SRQ. */
	if (rocemu_recv_wqe_next(qp, &resp->rq_ci, &resp->recv))
		return false;
	resp->has_recv = true;
	return true;
}

int rocemu_resp_write_begin(struct rocemu_qp *qp, struct rocemu_rc_resp *resp, const uint8_t *reth)
{
	unsigned int n;

	resp->write_va = rocemu_reth_va(reth);
	resp->write_rkey = rocemu_reth_rkey(reth);
	resp->write_left = rocemu_reth_dma_len(reth);
	/* A zero-length WRITE touches no memory, so no key is checked (IBTA 9.4.4). */
	return resp->write_left ? rocemu_dma_rkey(qp, resp->write_rkey, resp->write_va,
						  resp->write_left, IBV_ACCESS_REMOTE_WRITE, NULL, 0, &n)
				: 0;
}

int rocemu_resp_place_send(struct rocemu_qp *qp, struct rocemu_rc_resp *resp,
			   const struct iovec *data)
{
	struct rocemu_dma_seg remote[ROCEMU_DMA_MAX_SEGS];
	unsigned int n;
	int err;

	err = rocemu_dma_sgl(qp, resp->recv.sge, resp->recv.num_sge, resp->offset, data->iov_len,
			     IBV_ACCESS_LOCAL_WRITE, remote, ROCEMU_DMA_MAX_SEGS, &n);
	if (err)
		return err;
	/*
	 * A message's first packet shorter than the CQE's room is its only one
	 * (the others are MTU-sized): it goes into the CQE (cs_res), its SGEs
	 * checked as for DMA, and the driver's poll copies it out.
	 */
	if (!resp->offset)
		resp->cqe_data_len = data->iov_len <= qp->cqe_scatter_res &&
				     rocemu_cqe_scatter_reachable(qp->owner->pid, resp->recv.sge,
								  resp->recv.num_sge, remote, n) ?
				     (uint32_t)data->iov_len : 0;
	if (resp->cqe_data_len) {
		memcpy(resp->cqe_data, data->iov_base, data->iov_len);
		return 0;
	}
	return rocemu_dma_copy(rocemu_qp_mem_client(qp)->pid, data, 1, remote, n, true);
}

int rocemu_resp_place_write(struct rocemu_qp *qp, struct rocemu_rc_resp *resp,
			    const struct iovec *data)
{
	struct rocemu_dma_seg remote[ROCEMU_DMA_MAX_SEGS];
	unsigned int n;
	int err;

	if (data->iov_len > resp->write_left)
		return -EMSGSIZE;
	err = rocemu_dma_rkey(qp, resp->write_rkey, resp->write_va, data->iov_len,
			      IBV_ACCESS_REMOTE_WRITE, remote, ROCEMU_DMA_MAX_SEGS, &n);
	if (err)
		return err;
	resp->write_va += data->iov_len;
	resp->write_left -= (uint32_t)data->iov_len;
	return rocemu_dma_copy(rocemu_qp_mem_client(qp)->pid, data, 1, remote, n, true);
}

void rocemu_resp_complete(struct rocemu_qp *qp, struct rocemu_rc_resp *resp,
			  const struct rocemu_pkt *pkt)
{
	const uint8_t *imm = rocemu_pkt_immdt((uint8_t *)pkt->bth);
	const uint8_t *ieth = rocemu_pkt_ieth((uint8_t *)pkt->bth);
	struct rocemu_cqe_info info = {
		.op = (pkt->info->flags & ROCEMU_OPF_WRITE) ? MLX5_CQE_RESP_WR_IMM
			: imm ? MLX5_CQE_RESP_SEND_IMM : ieth ? MLX5_CQE_RESP_SEND_INV
			: MLX5_CQE_RESP_SEND,
		.qpn = qp->qpn,
		.wqe_counter = (uint16_t)resp->recv.counter,
		.byte_cnt = resp->offset,
		.src_qp = qp->attr.dest_qp_num,
		.solicited = rocemu_bth_se(pkt->bth),
	};

	/* A WRITE without immediate takes no receive WQE, not even one a lost UC SEND left. */
	if (resp->has_recv && (pkt->info->flags & (ROCEMU_OPF_SEND | ROCEMU_OPF_IMM))) {
		if (imm)
			memcpy(&info.imm, imm, sizeof(info.imm));
		if (ieth)
			memcpy(&info.imm, ieth, sizeof(info.imm));
		if ((pkt->info->flags & ROCEMU_OPF_SEND) && resp->cqe_data_len == resp->offset &&
		    resp->offset) {
			info.scatter = resp->cqe_data;
			info.scatter_len = resp->offset;
		}
		rocemu_rc_recv_cqe(qp, &info);
		resp->has_recv = false;
	}
	resp->in_msg = RC_MSG_NONE;
	resp->offset = 0;
	resp->cqe_data_len = 0;
}

void rocemu_resp_recv_fail(struct rocemu_qp *qp, struct rocemu_rc_resp *resp,
			   enum rocemu_rc_err err)
{
	struct rocemu_cqe_info info = {
		.op = MLX5_CQE_RESP_ERR,
		.syndrome = rocemu_rc_err_syndrome(err),
		.qpn = qp->qpn,
		.wqe_counter = (uint16_t)resp->recv.counter,
	};

	if (resp->has_recv) {
		rocemu_rc_recv_cqe(qp, &info);
		resp->has_recv = false;
	}
}
