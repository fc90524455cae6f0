/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Device memory (ibv_alloc_dm): regions of the device's MEMIC, each a
 * memfd the daemon maps and hands to the contexts that allocate or import
 * it. Each takes its length rounded up to pages from the device's
 * ROCEMU_DM_MAX_SIZE, as the kernel's MEMIC allocator does. An MR over it
 * (REG_DM_MR) is zero based and reached by the DMA engine in the daemon's
 * own memory. Functions return 0 or -errno; errors as the kernel's mlx5.
 */
#ifndef ROCEMU_EMULATOR_DM_H
#define ROCEMU_EMULATOR_DM_H

#include <stdint.h>

#include "emulator/base/shm.h"
#include "emulator/core/client.h"
#include "emulator/core/object.h"

struct rocemu_dm {
	struct rocemu_ufile *file;
	struct rocemu_list node;	/* in file->dms */
	uint32_t handle;
	struct rocemu_charge charge;	/* limits.h */
	uint64_t length;		/* as allocated: the bounds of copies and MRs */
	int fd;				/* kept to hand to importers */
	struct rocemu_shm shm;
	uint32_t users;			/* MRs over it */
};

/*
 * Allocate: -EINVAL for length 0, over max_dm_size or log_align_req over
 * ROCEMU_DM_MAX_LOG_ALIGN; -ENOMEM when the device's memory is taken.
 * *fd is a copy of the memfd to send.
 */
int rocemu_dm_alloc(struct rocemu_client *c, const struct rocemu_alloc_dm_req *req,
		    struct rocemu_dm_resp *resp, int *fd);
/* -ENOENT for no such DM of c's ufile, -EBUSY while MRs use it. */
int rocemu_dm_release(struct rocemu_client *c, uint32_t handle);
/* The DM handle of c's ufile, for another context: -ENOENT if none. */
int rocemu_dm_import(struct rocemu_client *c, uint32_t handle, struct rocemu_dm_resp *resp,
		     int *fd);
/*
 * Register [offset, offset + length) of a DM, zero based: -EINVAL for a
 * bad PD or DM, access outside the MEMIC's, no IBV_ACCESS_ZERO_BASED, or
 * a range outside the DM.
 */
int rocemu_dm_reg_mr(struct rocemu_client *c, const struct rocemu_reg_dm_mr_req *req,
		     struct rocemu_reg_mr_resp *resp);
/* Device memory as objects of its ufile (object.h), freed when the ufile goes. */
extern const struct rocemu_obj_kind rocemu_dm_kind;

#endif /* ROCEMU_EMULATOR_DM_H */
