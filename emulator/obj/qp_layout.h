/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Sizing of a QP's rings from the capabilities asked (mlx5 rules): SQ in
 * 64-byte basic blocks, RQ in power-of-two strides, then the doorbell
 * record and the BlueFlame area, each where the layout says.
 */
#ifndef ROCEMU_EMULATOR_QP_LAYOUT_H
#define ROCEMU_EMULATOR_QP_LAYOUT_H

#include <infiniband/verbs.h>

#include "rocemu/ctrl.h"

#define ROCEMU_BF_SIZE 512

/*
 * Compute the granted capabilities and the memfd layout (qpn left 0) for
 * want, each send WQE with room for a TSO header of max_tso_header bytes.
 * Returns 0, or -EINVAL when want exceeds the device limits.
 */
int rocemu_qp_layout(const struct ibv_qp_cap *want, enum ibv_qp_type type,
		     uint32_t max_tso_header, struct ibv_qp_cap *granted,
		     struct rocemu_qp_layout *layout);

#endif /* ROCEMU_EMULATOR_QP_LAYOUT_H */
