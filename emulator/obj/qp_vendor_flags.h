/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * mlx5's vendor create flags of a QP, as the kernel's process_vendor_flags
 * takes them: packet-based credits, and how much data the QP's CQEs carry
 * instead of its buffers (scatter to CQE, cqe_scatter.h; the QP context's
 * cs_res and cs_req).
 */
#ifndef ROCEMU_EMULATOR_QP_VENDOR_FLAGS_H
#define ROCEMU_EMULATOR_QP_VENDOR_FLAGS_H

#include <stdint.h>

#include "rocemu/ctrl.h"

struct rocemu_qp;

/*
 * The kernel's answer to vendor flags for a QP of this type: -EINVAL for
 * an unknown flag or packet-based credits on a QP that is not RC; the
 * scatter flags are taken by every type (and ignored where they mean nothing).
 */
int rocemu_qp_vendor_check(const struct rocemu_create_qp_req *req);

/*
 * Set cs_res and cs_req of a new qp from its vendor flags, type,
 * sq_sig_all and CQs: qp->cqe_scatter_res, the bytes of a received SEND
 * its receive CQEs may carry, and qp->cqe_scatter_req, those of a READ or
 * atomic reply its requester CQEs may carry (0, 32 or 64).
 */
void rocemu_qp_vendor_setup(struct rocemu_qp *qp, uint32_t vendor_flags);

#endif /* ROCEMU_EMULATOR_QP_VENDOR_FLAGS_H */
