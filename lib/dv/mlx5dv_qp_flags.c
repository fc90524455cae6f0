/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * mlx5dv_create_qp's create_flags, checked as mlx5's create_qp checks them
 * and then as the kernel's process_vendor_flags takes the mlx5 flags they
 * become: scatter to CQE on by default (MLX5_SCATTER_TO_CQE=0 turns it
 * off), forbidden or allowed for READ/atomic replies by the program;
 * packet-based credits (RC only, the daemon checks); tunnel and TIR
 * self-loopback flags only for raw packet QPs; signature pipelining needs
 * SQD->RTS with drain, which a ConnectX-5/6 lacks.
 */
#include "lib/shim.h"
#include "lib/dv/dv.h"

#define DV_QP_KNOWN_CREATE_FLAGS                                                          \
	((uint32_t)(MLX5DV_QP_CREATE_TUNNEL_OFFLOADS |                                   \
		    MLX5DV_QP_CREATE_TIR_ALLOW_SELF_LOOPBACK_UC |                        \
		    MLX5DV_QP_CREATE_TIR_ALLOW_SELF_LOOPBACK_MC |                        \
		    MLX5DV_QP_CREATE_DISABLE_SCATTER_TO_CQE |                            \
		    MLX5DV_QP_CREATE_ALLOW_SCATTER_TO_CQE |                              \
		    MLX5DV_QP_CREATE_PACKET_BASED_CREDIT_MODE | MLX5DV_QP_CREATE_SIG_PIPELINING))
/* What only a raw packet QP's TIR and TIS take (the kernel keeps them for other types: EINVAL). */
#define DV_QP_RAW_PACKET_CREATE_FLAGS                                  \
	((uint32_t)(MLX5DV_QP_CREATE_TUNNEL_OFFLOADS |                \
		    MLX5DV_QP_CREATE_TIR_ALLOW_SELF_LOOPBACK_UC |     \
		    MLX5DV_QP_CREATE_TIR_ALLOW_SELF_LOOPBACK_MC))

int rocemu_dv_qp_create_flags(const struct ibv_qp_init_attr_ex *attr, uint32_t create_flags,
			      uint32_t *vendor_flags)
{
	uint32_t vendor = rocemu_qp_vendor_default();

	if (create_flags & ~DV_QP_KNOWN_CREATE_FLAGS)
		return EINVAL;
	if (create_flags & MLX5DV_QP_CREATE_DISABLE_SCATTER_TO_CQE) {
		if (create_flags & MLX5DV_QP_CREATE_ALLOW_SCATTER_TO_CQE)
			return EINVAL;
		vendor &= ~(uint32_t)ROCEMU_QP_VENDOR_SCATTER_CQE;
	}
	if (create_flags & MLX5DV_QP_CREATE_ALLOW_SCATTER_TO_CQE)
		vendor |= ROCEMU_QP_VENDOR_SCATTER_CQE | ROCEMU_QP_VENDOR_ALLOW_SCATTER_CQE;
	if (create_flags & MLX5DV_QP_CREATE_PACKET_BASED_CREDIT_MODE)
		vendor |= ROCEMU_QP_VENDOR_PACKET_BASED_CREDIT;
	/* No MLX5_CTX_FLAGS_SQD2RTS_SUPPORTED: mlx5 refuses before asking the kernel. */
	if (create_flags & MLX5DV_QP_CREATE_SIG_PIPELINING)
		return EOPNOTSUPP;
	if ((create_flags & DV_QP_RAW_PACKET_CREATE_FLAGS) && attr->qp_type != IBV_QPT_RAW_PACKET)
		return EINVAL;
	*vendor_flags = vendor;
	return 0;
}
