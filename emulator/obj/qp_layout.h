/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Sizing of a QP's rings from the capabilities asked, by its device's
 * ring format (mlx5: SQ in 64-byte basic blocks; mlx4: one WQE per
 * power-of-two stride), the RQ in power-of-two strides, then the doorbell
 * record and the BlueFlame area (mlx4: the UAR page), each where the
 * layout says.
 */
#ifndef ROCEMU_EMULATOR_QP_LAYOUT_H
#define ROCEMU_EMULATOR_QP_LAYOUT_H

#include <infiniband/verbs.h>

#include "emulator/ring/format.h"
#include "rocemu/ctrl.h"

#define ROCEMU_BF_SIZE 512

/*
 * Compute the granted capabilities and the memfd layout (qpn left 0) for
 * want in format f, each send WQE with room for a TSO header of
 * max_tso_header bytes, each receive WQE for inl_recv_sz bytes inline.
 * Returns 0, or -EINVAL when want exceeds the device limits.
 */
int rocemu_qp_layout(const struct rocemu_ring_format *f, const struct ibv_qp_cap *want,
		     enum ibv_qp_type type, uint32_t max_tso_header, uint32_t inl_recv_sz,
		     struct ibv_qp_cap *granted, struct rocemu_qp_layout *layout);

#endif /* ROCEMU_EMULATOR_QP_LAYOUT_H */
