/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The mlx5 direct-verbs device: an emulated device is an mlx5 device
 * (mlx5dv_is_supported), opened without DevX, and mlx5dv_query_device
 * states what the emulator does: CQE version 0, no CQE compression or
 * padding, no multi-packet WQEs, striding RQ, tunnel or signature
 * offloads, DC with DCI streams and ODP, no hardware clock page;
 * packet-based credits.
 */
#include "shim.h"
#include "dv.h"

#include <string.h>

/* Capabilities mlx5dv_query_device answers, each with zero caps (mlx5 copies its caps). */
#define DV_QUERY_ANSWERED_MASK                                                          \
	((uint64_t)(MLX5DV_CONTEXT_MASK_CQE_COMPRESION | MLX5DV_CONTEXT_MASK_SWP |      \
		    MLX5DV_CONTEXT_MASK_STRIDING_RQ | MLX5DV_CONTEXT_MASK_TUNNEL_OFFLOADS | \
		    MLX5DV_CONTEXT_MASK_DYN_BFREGS | MLX5DV_CONTEXT_MASK_FLOW_ACTION_FLAGS | \
		    MLX5DV_CONTEXT_MASK_DC_ODP_CAPS | MLX5DV_CONTEXT_MASK_SIGNATURE_OFFLOAD | \
		    MLX5DV_CONTEXT_MASK_DCI_STREAMS | MLX5DV_CONTEXT_MASK_WR_MEMCPY_LENGTH | \
		    MLX5DV_CONTEXT_MASK_CRYPTO_OFFLOAD))

bool mlx5dv_is_supported(struct ibv_device *device)
{
	return rocemu_device_of(device) ? true : REAL(mlx5dv_is_supported)(device);
}

struct ibv_context *mlx5dv_open_device(struct ibv_device *device,
				       struct mlx5dv_context_attr *attr)
{
	if (!rocemu_device_of(device))
		return REAL(mlx5dv_open_device)(device, attr);
	if (attr && (attr->flags & ~(uint32_t)MLX5DV_CONTEXT_FLAGS_DEVX))
		return dv_fail(EINVAL);
	/* A kernel without DevX refuses the DevX context: programs fall back to verbs. */
	if (attr && (attr->flags & MLX5DV_CONTEXT_FLAGS_DEVX))
		return dv_refuse();
	return ibv_open_device(device);
}

int mlx5dv_query_device(struct ibv_context *ctx_in, struct mlx5dv_context *attrs_out)
{
	uint64_t asked;

	if (!rocemu_ctx_is_ours(ctx_in))
		return REAL(mlx5dv_query_device)(ctx_in, attrs_out);
	asked = attrs_out->comp_mask;
	attrs_out->version = 0;
	/*
	 * CQE version 0, no MPW, no 128-byte CQE compression or padding, no
	 * real-time clock; RC QPs take packet-based credits (mlx5dv_qp_flags.c).
	 */
	attrs_out->flags = MLX5DV_CONTEXT_FLAGS_PACKET_BASED_CREDIT_MODE;
	memset(&attrs_out->cqe_comp_caps, 0, sizeof(attrs_out->cqe_comp_caps));
	memset(&attrs_out->sw_parsing_caps, 0, sizeof(attrs_out->sw_parsing_caps));
	memset(&attrs_out->striding_rq_caps, 0, sizeof(attrs_out->striding_rq_caps));
	attrs_out->tunnel_offloads_caps = 0;
	attrs_out->max_dynamic_bfregs = 0;
	attrs_out->flow_action_flags = 0;
	/* DC's DMA is every transport's: ODP as XRC, which also receives through SRQs. */
	attrs_out->dc_odp_caps = ROCEMU_SRQ_TRANSPORT_ODP_CAPS;
	memset(&attrs_out->sig_caps, 0, sizeof(attrs_out->sig_caps));
	attrs_out->dci_streams_caps.max_log_num_concurent = ROCEMU_DCI_MAX_LOG_STREAMS;
	attrs_out->dci_streams_caps.max_log_num_errored = ROCEMU_DCI_MAX_LOG_STREAMS;
	attrs_out->max_wr_memcpy_length = 0;
	memset(&attrs_out->crypto_caps, 0, sizeof(attrs_out->crypto_caps));
	/* No clock page, core clock or LAG: mlx5 then leaves those bits out. */
	attrs_out->comp_mask = asked & DV_QUERY_ANSWERED_MASK;
	return 0;
}

/* mlx5 without a clock info page (no hardware timestamps here) says EINVAL. */
int mlx5dv_get_clock_info(struct ibv_context *context, struct mlx5dv_clock_info *clock_info)
{
	return rocemu_ctx_is_ours(context) ? EINVAL : REAL(mlx5dv_get_clock_info)(context, clock_info);
}

int mlx5dv_vfio_get_events_fd(struct ibv_context *ibctx)
{
	if (rocemu_ctx_is_ours(ibctx)) {
		errno = EOPNOTSUPP;
		return -1;
	}
	return REAL(mlx5dv_vfio_get_events_fd)(ibctx);
}

/* mlx5 send operations on an emulated QP: a DCI's DC address; no UMR or memcpy. */
struct mlx5dv_qp_ex *mlx5dv_qp_ex_from_ibv_qp_ex(struct ibv_qp_ex *qp)
{
	if (qp && rocemu_ctx_is_ours(qp->qp_base.context))
		return rocemu_dv_qp_ex(qp);
	return REAL(mlx5dv_qp_ex_from_ibv_qp_ex)(qp);
}
