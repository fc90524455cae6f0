/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Helpers of the direct-verbs interposition (lib/dv/). */
#ifndef ROCEMU_DV_H
#define ROCEMU_DV_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

/* A constructor that fails: NULL with errno err. */
static inline void *dv_fail(int err)
{
	errno = err;
	return NULL;
}

/* A constructor refused as mlx5 refuses what the device lacks: NULL, errno EOPNOTSUPP. */
static inline void *dv_refuse(void)
{
	return dv_fail(EOPNOTSUPP);
}

struct ibv_qp_init_attr_ex;

/* Internal to the shim, as shim.h's declarations: not exported from librocemu.so. */
#pragma GCC visibility push(hidden)

/*
 * mlx5dv_qp_flags.c: mlx5dv_create_qp's create_flags for a QP of attr's
 * type into *vendor_flags (ROCEMU_QP_VENDOR_*). Returns 0 or the errno
 * value mlx5 and its kernel give.
 */
int rocemu_dv_qp_create_flags(const struct ibv_qp_init_attr_ex *attr, uint32_t create_flags,
			      uint32_t *vendor_flags);

#pragma GCC visibility pop

#endif /* ROCEMU_DV_H */
