/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Helpers of the direct-verbs interposition (mlx5dv*.c). */
#ifndef ROCEMU_DV_H
#define ROCEMU_DV_H

#include <errno.h>
#include <stddef.h>

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

#endif /* ROCEMU_DV_H */
