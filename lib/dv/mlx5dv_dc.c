/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * mlx5 Dynamically Connected QPs on an emulated device: mlx5dv_create_qp
 * with MLX5DV_QP_INIT_ATTR_MASK_DC makes a DCT (a target on an SRQ with
 * an access key) or a DCI (an initiator, with DCI streams if asked), as
 * mlx5's create_dc_qp checks them; a DCI's mlx5dv_qp_ex sets each WQE's
 * DCT (mlx5dv_wr_set_dc_addr, _stream) in the datagram segment as mlx5
 * writes it; mlx5dv_dci_stream_id_reset starts an errored stream again.
 * The daemon runs DC (emulator/dc/).
 */
#include "lib/shim.h"
#include "lib/dv/dv.h"

/* mlx5's checks of dc_init_attr (create_dc_qp). Returns 0 or the errno value. */
static int dc_attr_check(const struct ibv_qp_init_attr_ex *attr,
			 const struct mlx5dv_qp_init_attr *dv)
{
	const struct mlx5dv_dc_init_attr *dc = &dv->dc_init_attr;
	bool streams = dv->comp_mask & MLX5DV_QP_INIT_ATTR_MASK_DCI_STREAMS;

	switch (dc->dc_type) {
	case MLX5DV_DCTYPE_DCT:
		/* A target has no send queue to post to, and receives through its SRQ. */
		if (streams || !attr->srq ||
		    ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) && attr->send_ops_flags))
			return EINVAL;
		return 0;
	case MLX5DV_DCTYPE_DCI:
		if (streams && (dc->dci_streams.log_num_concurent > ROCEMU_DCI_MAX_LOG_STREAMS ||
				dc->dci_streams.log_num_errored > ROCEMU_DCI_MAX_LOG_STREAMS))
			return EINVAL;
		return 0;
	default:
		return EINVAL;
	}
}

struct ibv_qp *rocemu_dc_qp_create(struct ibv_context *context, struct ibv_qp_init_attr_ex *attr,
				   const struct mlx5dv_qp_init_attr *dv, uint32_t vendor_flags)
{
	const struct mlx5dv_dc_init_attr *dci = &dv->dc_init_attr;
	struct rocemu_dc_attr dc = { .type = ROCEMU_QPT_DCI };
	int err = dc_attr_check(attr, dv);

	if (err)
		return dv_fail(err);
	if (dci->dc_type == MLX5DV_DCTYPE_DCT) {
		dc.type = ROCEMU_QPT_DCT;
		dc.dct_access_key = dci->dct_access_key;
	} else if (dv->comp_mask & MLX5DV_QP_INIT_ATTR_MASK_DCI_STREAMS) {
		dc.log_concurrent = dci->dci_streams.log_num_concurent;
		dc.log_errored = dci->dci_streams.log_num_errored;
	}
	return rocemu_create_qp_dc(context, attr, vendor_flags, &dc);
}

static struct rocemu_qp *to_rqp_dv(struct mlx5dv_qp_ex *dv)
{
	return container_of(dv, struct rocemu_qp, dv_qpx);
}

/* Between the builder and its data setter, as in mlx5 (mlx5_send_wr_set_dc_addr_stream). */
static void wr_set_dc_addr_stream(struct mlx5dv_qp_ex *dv, struct ibv_ah *ah, uint32_t remote_dctn,
				  uint64_t remote_dc_key, uint16_t stream_id)
{
	struct rocemu_wqe *wqe = &to_rqp_dv(dv)->sq.pending;

	wqe->ah = ah;
	wqe->remote_qpn = remote_dctn;
	wqe->dc_key = remote_dc_key;
	wqe->dci_stream = stream_id;
}

static void wr_set_dc_addr(struct mlx5dv_qp_ex *dv, struct ibv_ah *ah, uint32_t remote_dctn,
			   uint64_t remote_dc_key)
{
	wr_set_dc_addr_stream(dv, ah, remote_dctn, remote_dc_key, 0);
}

void rocemu_dci_wr_ops_init(struct rocemu_qp *qp)
{
	qp->dv_qpx.wr_set_dc_addr = wr_set_dc_addr;
	qp->dv_qpx.wr_set_dc_addr_stream = wr_set_dc_addr_stream;
}

int mlx5dv_dci_stream_id_reset(struct ibv_qp *ibqp, uint16_t stream_id)
{
	struct rocemu_dci_stream_reset_req req = { .stream_id = stream_id };

	if (!ibqp || !rocemu_ctx_is_ours(ibqp->context))
		return REAL(mlx5dv_dci_stream_id_reset)(ibqp, stream_id);
	if (!rocemu_dv_plays(ibqp->context->device, ROCEMU_MODEL_CX5))
		return EOPNOTSUPP;
	/* mlx5 asks the firmware only of a QP it knows in RTS. */
	if (ibqp->state != IBV_QPS_RTS)
		return EOPNOTSUPP;
	req.qpn = ibqp->qp_num;
	return -rocemu_conn_call(&to_rctx(ibqp->context)->conn, ROCEMU_OP_DCI_STREAM_RESET, &req,
				 NULL, NULL, 0);
}
