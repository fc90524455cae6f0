/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The mlx5 direct-verbs device: an emulated device is an mlx5 device
 * (mlx5dv_is_supported), opened without DevX, and mlx5dv_query_device
 * states what the emulator does: CQE version 0, no CQE compression or
 * padding, no multi-packet WQEs, striding RQ, tunnel or signature
 * offloads, DC with DCI streams and ODP; a clock info page
 * (mlx5dv_clock.c) but no mapped core clock register; packet-based credits.
 */
#include "lib/shim.h"
#include "lib/dv/dv.h"

/* One capability mlx5dv_query_device was asked for: written and reported, as mlx5 does. */
#define DV_ANSWER(bit, field, value)                     \
	do {                                             \
		if (asked & (bit)) {                     \
			attrs_out->field = (value);      \
			answered |= (bit);               \
		}                                        \
	} while (0)

bool mlx5dv_is_supported(struct ibv_device *device)
{
	return rocemu_device_of(device) ? rocemu_dv_plays(device, ROCEMU_MODEL_CX5)
				       : REAL(mlx5dv_is_supported)(device);
}

struct ibv_context *mlx5dv_open_device(struct ibv_device *device,
				       struct mlx5dv_context_attr *attr)
{
	if (!rocemu_device_of(device))
		return REAL(mlx5dv_open_device)(device, attr);
	if (!rocemu_dv_plays(device, ROCEMU_MODEL_CX5))
		return dv_refuse();
	if (attr && (attr->flags & ~(uint32_t)MLX5DV_CONTEXT_FLAGS_DEVX))
		return dv_fail(EINVAL);
	/* A kernel without DevX refuses the DevX context: programs fall back to verbs. */
	if (attr && (attr->flags & MLX5DV_CONTEXT_FLAGS_DEVX))
		return dv_refuse();
	return ibv_open_device(device);
}

int mlx5dv_query_device(struct ibv_context *ctx_in, struct mlx5dv_context *attrs_out)
{
	uint64_t asked, answered = 0;

	if (!rocemu_ctx_is_ours(ctx_in))
		return REAL(mlx5dv_query_device)(ctx_in, attrs_out);
	if (!rocemu_dv_plays(ctx_in->device, ROCEMU_MODEL_CX5))
		return EOPNOTSUPP;
	asked = attrs_out->comp_mask;
	/* CQE version 0, no MPW, no 128-byte CQE compression or padding, free-running clock. */
	attrs_out->version = 0;
	/* RC QPs take packet-based credits (mlx5dv_qp_flags.c). */
	attrs_out->flags = MLX5DV_CONTEXT_FLAGS_PACKET_BASED_CREDIT_MODE;
	/* Fields past those asked for may lie beyond an older program's struct: left alone. */
	DV_ANSWER(MLX5DV_CONTEXT_MASK_CQE_COMPRESION, cqe_comp_caps,
		  (struct mlx5dv_cqe_comp_caps){ 0 });
	DV_ANSWER(MLX5DV_CONTEXT_MASK_SWP, sw_parsing_caps, (struct mlx5dv_sw_parsing_caps){ 0 });
	DV_ANSWER(MLX5DV_CONTEXT_MASK_STRIDING_RQ, striding_rq_caps,
		  (struct mlx5dv_striding_rq_caps){ 0 });
	DV_ANSWER(MLX5DV_CONTEXT_MASK_TUNNEL_OFFLOADS, tunnel_offloads_caps, 0);
	DV_ANSWER(MLX5DV_CONTEXT_MASK_DCI_STREAMS, dci_streams_caps,
		  ((struct mlx5dv_dci_streams_caps){
			  .max_log_num_concurent = ROCEMU_DCI_MAX_LOG_STREAMS,
			  .max_log_num_errored = ROCEMU_DCI_MAX_LOG_STREAMS }));
	DV_ANSWER(MLX5DV_CONTEXT_MASK_DYN_BFREGS, max_dynamic_bfregs, 0);
	DV_ANSWER(MLX5DV_CONTEXT_MASK_CLOCK_INFO_UPDATE, max_clock_info_update_nsec,
		  rocemu_clock_info_update_nsec());
	DV_ANSWER(MLX5DV_CONTEXT_MASK_FLOW_ACTION_FLAGS, flow_action_flags, 0);
	/* DC's DMA is every transport's: ODP as XRC, which also receives through SRQs. */
	DV_ANSWER(MLX5DV_CONTEXT_MASK_DC_ODP_CAPS, dc_odp_caps, ROCEMU_SRQ_TRANSPORT_ODP_CAPS);
	/* No mapped core clock register (HCA_CORE_CLOCK) and no LAG: mlx5 leaves those out. */
	DV_ANSWER(MLX5DV_CONTEXT_MASK_SIGNATURE_OFFLOAD, sig_caps, (struct mlx5dv_sig_caps){ 0 });
	DV_ANSWER(MLX5DV_CONTEXT_MASK_WR_MEMCPY_LENGTH, max_wr_memcpy_length, 0);
	DV_ANSWER(MLX5DV_CONTEXT_MASK_CRYPTO_OFFLOAD, crypto_caps, (struct mlx5dv_crypto_caps){ 0 });
	attrs_out->comp_mask = answered;
	return 0;
}

int mlx5dv_vfio_get_events_fd(struct ibv_context *ibctx)
{
	if (rocemu_ctx_is_ours(ibctx)) {
		errno = EOPNOTSUPP;
		return -1;
	}
	return REAL(mlx5dv_vfio_get_events_fd)(ibctx);
}
