/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Reserved QP numbers (mlx5dv_reserved_qpn_alloc): numbers unique in the
 * daemon's QPN space that no QP ever gets, for programs that name a
 * connection by QPN without a QP of their own (the RDMA CM with DC). They
 * come from a range of their own above every QP's, so no QP lookup can
 * meet one, and go with the context that took them, as the kernel frees
 * a context's DevX objects.
 */
#ifndef ROCEMU_EMULATOR_RESERVED_QPN_H
#define ROCEMU_EMULATOR_RESERVED_QPN_H

#include <stdint.h>

#include "emulator/core/client.h"
#include "emulator/core/object.h"

/* The first reserved QPN: above ROCEMU_FIRST_QPN + every QP of every device. */
#define ROCEMU_FIRST_RESERVED_QPN 0x800000u

struct rocemu_reserved_qpn {
	struct rocemu_client *owner;
	struct rocemu_list node;	/* in owner->reserved_qpns */
	uint32_t qpn;
	struct rocemu_charge charge;	/* limits.h */
};

/* Reserve a QPN for c. Returns 0, -ENOMEM when none is left, or -EAGAIN past c's QPs. */
int rocemu_reserved_qpn_alloc(struct rocemu_client *c, uint32_t *qpn);
/* Give back c's reserved qpn. Returns 0, or -EINVAL when c holds no such QPN. */
int rocemu_reserved_qpn_dealloc(struct rocemu_client *c, uint32_t qpn);
/* Reserved QPNs as objects of their context (object.h): given back when it closes. */
extern const struct rocemu_obj_kind rocemu_reserved_qpn_kind;

#endif /* ROCEMU_EMULATOR_RESERVED_QPN_H */
