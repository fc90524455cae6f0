/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Helpers of the direct-verbs interposition (lib/dv/). */
#ifndef ROCEMU_DV_H
#define ROCEMU_DV_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/shim.h"

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

/*
 * The emulated device dev plays model: libmlx5's is_mlx5_dev for
 * ROCEMU_MODEL_CX5, libmlx4's own device for ROCEMU_MODEL_CX3. A
 * provider's direct verbs answer EOPNOTSUPP for an emulated device of the
 * other model, as it answers for a device not its own.
 */
static inline bool rocemu_dv_plays(struct ibv_device *dev, enum rocemu_model model)
{
	const struct rocemu_device *d = rocemu_device_of(dev);

	return d && d->info.model == model;
}

/* Internal to the shim, as shim.h's declarations: not exported from librocemu.so. */
#pragma GCC visibility push(hidden)

/*
 * mlx5dv_qp_flags.c: mlx5dv_create_qp's create_flags for a QP of attr's
 * type into *vendor_flags (ROCEMU_QP_VENDOR_*). Returns 0 or the errno
 * value mlx5 and its kernel give.
 */
int rocemu_dv_qp_create_flags(const struct ibv_qp_init_attr_ex *attr, uint32_t create_flags,
			      uint32_t *vendor_flags);

/*
 * dv_direct.c: tell the daemon once (*told) that the QP or CQ handle's
 * doorbells ring without the shim, as mlx5dv_init_obj and
 * mlx4dv_init_obj hand it out. Every doorbell the program writes lies
 * between db_first and db_end, in the pages an idle daemon may
 * write-protect to be woken by the next; NULL when some lies elsewhere
 * (the daemon then polls). Returns 0 or the errno value.
 */
int rocemu_dv_direct_doorbells(struct ibv_context *context, bool *told,
			       enum rocemu_direct_kind kind, uint32_t handle,
			       const void *db_first, const void *db_end);
/*
 * The page handed out as a CQ's doorbell register (mlx5 cq_uar, mlx4
 * MLX4DV_CQ_MASK_UAR): the daemon reads the arm word of the doorbell
 * record instead, so the writes land here and nobody reads them.
 */
extern uint64_t rocemu_dv_cq_uar_sink[4096 / sizeof(uint64_t)];

#pragma GCC visibility pop

#endif /* ROCEMU_DV_H */
