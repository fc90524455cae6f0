/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/mem/dm.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "emulator/mem/mm.h"
#include "emulator/mem/pd_mr.h"
#include "rocemu/log.h"

/* What a MEMIC MR may grant (the kernel's MLX5_IB_DM_MEMIC_ALLOWED_ACCESS). */
#define DM_MR_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		      IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC | \
		      IBV_ACCESS_ZERO_BASED)

static struct rocemu_dm *dm_lookup(struct rocemu_client *c, uint32_t handle)
{
	return rocemu_obj_lookup(c->emu, &rocemu_dm_kind, c->ufile, handle);
}

static int dm_resp(const struct rocemu_dm *dm, struct rocemu_dm_resp *resp, int *fd)
{
	*fd = fcntl(dm->fd, F_DUPFD_CLOEXEC, 0);
	if (*fd < 0)
		return -errno;
	resp->handle = dm->handle;
	resp->reserved = 0;
	resp->length = dm->length;
	resp->map_size = dm->shm.size;
	return 0;
}

int rocemu_dm_alloc(struct rocemu_client *c, const struct rocemu_alloc_dm_req *req,
		    struct rocemu_dm_resp *resp, int *fd)
{
	struct rocemu_device *dev = c->dev;
	struct rocemu_dm *dm;
	uint64_t size;
	int err;

	/* The kernel's mlx5_cmd_alloc_memic: a length, an alignment the device can give. */
	if (!req->length || req->length > ROCEMU_DM_MAX_SIZE ||
	    req->log_align_req > ROCEMU_DM_MAX_LOG_ALIGN)
		return -EINVAL;
	size = rocemu_page_align((size_t)req->length);
	if (size > ROCEMU_DM_MAX_SIZE - dev->dm_used)
		return -ENOMEM;
	dm = calloc(1, sizeof(*dm));
	if (!dm)
		return -ENOMEM;
	/* Its memfd is kept for importers, and its memory is the daemon's. */
	err = rocemu_charge(c, &dm->charge, ROCEMU_RES_DM,
			    (struct rocemu_amount){ .fds = 1, .mem = size });
	if (err) {
		free(dm);
		return err;
	}
	dm->fd = rocemu_shm_create("rocemu-dm", (size_t)size, &dm->shm);
	if (dm->fd < 0) {
		err = dm->fd;
		rocemu_uncharge(&dm->charge);
		free(dm);
		return err;
	}
	err = rocemu_obj_add(c->emu, &rocemu_dm_kind, c->ufile, dm);
	if (err)
		goto fail;
	dm->length = req->length;
	err = dm_resp(dm, resp, fd);
	if (err) {
		rocemu_obj_remove(c->emu, &rocemu_dm_kind, dm);
		goto fail;
	}
	dev->dm_used += dm->shm.size;
	rocemu_log(ROCEMU_LOG_DEBUG, "%s dm %u alloc len %llu", dev->name, dm->handle,
		   (unsigned long long)dm->length);
	return 0;

fail:
	rocemu_shm_destroy(&dm->shm);
	close(dm->fd);
	rocemu_uncharge(&dm->charge);
	free(dm);
	return err;
}

static void dm_free(struct rocemu_emu *emu, struct rocemu_dm *dm)
{
	rocemu_log(ROCEMU_LOG_DEBUG, "%s dm %u free", dm->file->dev->name, dm->handle);
	rocemu_obj_remove(emu, &rocemu_dm_kind, dm);
	dm->file->dev->dm_used -= dm->shm.size;
	rocemu_shm_destroy(&dm->shm);
	close(dm->fd);
	rocemu_uncharge(&dm->charge);
	free(dm);
}

ROCEMU_OBJ_KIND(rocemu_dm_kind, struct rocemu_dm, struct rocemu_ufile, dms, dms, file, handle, node,
		dm_free, .first = 1,
		.max = ROCEMU_DM_MAX_SIZE / ROCEMU_DM_UNIT * ROCEMU_MAX_DEVICES);

int rocemu_dm_release(struct rocemu_client *c, uint32_t handle)
{
	struct rocemu_dm *dm = dm_lookup(c, handle);

	if (!dm)
		return -ENOENT;
	if (dm->users)
		return -EBUSY;
	dm_free(c->emu, dm);
	return 0;
}

int rocemu_dm_import(struct rocemu_client *c, uint32_t handle, struct rocemu_dm_resp *resp,
		     int *fd)
{
	struct rocemu_dm *dm = dm_lookup(c, handle);

	return dm ? dm_resp(dm, resp, fd) : -ENOENT;
}

int rocemu_dm_reg_mr(struct rocemu_client *c, const struct rocemu_reg_dm_mr_req *req,
		     struct rocemu_reg_mr_resp *resp)
{
	struct rocemu_pd *pd = rocemu_pd_lookup(c, req->pdn);
	struct rocemu_dm *dm = dm_lookup(c, req->dm);
	struct rocemu_mm *self;
	struct rocemu_mr *mr;
	int err;

	/* uverbs' UVERBS_METHOD_DM_MR_REG checks, then the MEMIC's access rule. */
	if (!pd || !dm || !(req->access & IBV_ACCESS_ZERO_BASED) ||
	    (req->access & ~DM_MR_ACCESS) || req->offset > dm->length ||
	    req->length > dm->length - req->offset)
		return -EINVAL;
	err = rocemu_mr_access_check(req->access);
	if (err)
		return err;
	self = rocemu_mm_self(c->emu);
	if (!self)
		return -errno;
	/* Zero based, in the daemon's own mapping of the region. */
	err = rocemu_mr_create(c, pd, req->access, self,
			       (uint64_t)(uintptr_t)dm->shm.addr + req->offset, req->length, 0, &mr);
	rocemu_mm_put(self);
	if (err)
		return err;
	mr->dm = dm;
	mr->mem_gen = 0;	/* the daemon's own mapping: no report ever takes it away */
	dm->users++;
	rocemu_mr_resp(mr, resp);
	return 0;
}
