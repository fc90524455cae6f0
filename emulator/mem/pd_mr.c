/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/mem/pd_mr.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/mlx5dv.h>

#include "emulator/base/proc_maps.h"
#include "emulator/mem/dm.h"
#include "emulator/mem/mkey.h"
#include "emulator/mem/mkey_indirect.h"
#include "emulator/mem/mm.h"
#include "emulator/mem/mm_watch.h"
#include "emulator/mem/mw.h"
#include "rocemu/log.h"

#define MR_ACCESS_SUPPORTED (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC | \
			     IBV_ACCESS_MW_BIND | IBV_ACCESS_ZERO_BASED | \
			     IBV_ACCESS_ON_DEMAND | IBV_ACCESS_HUGETLB)
#define MR_ACCESS_WRITES (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			  IBV_ACCESS_REMOTE_ATOMIC)
#define MR_REREG_FLAGS (IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_PD | \
			IBV_REREG_MR_CHANGE_ACCESS)

/* IBTA 10.6.3.1 (C10-20): remote write or atomic needs local write. */
int rocemu_mr_access_check(uint32_t access)
{
	access &= ~IBV_ACCESS_OPTIONAL_RANGE;	/* best effort bits, ignored */
	if (access & ~MR_ACCESS_SUPPORTED)
		return -EINVAL;
	if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IBV_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	return 0;
}

/* The implicit ODP MR's range: all of the address space. */
static bool mr_is_implicit(uint64_t addr, uint64_t length)
{
	return addr == 0 && length == UINT64_MAX;
}

/*
 * An ODP MR is not pinned: its pages need not exist yet, each access
 * faults them in (or fails). Checks and errno as mlx5_ib_reg_user_mr.
 */
static int mr_range_check(pid_t pid, uint64_t addr, uint64_t length, uint64_t iova,
			  uint32_t access)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	/* The range's end, rounded up to a page, past the top of the address space. */
	bool wraps = addr + length < addr || addr + length > UINT64_MAX - (page - 1);

	if (length == 0)
		return -EINVAL;
	if (access & IBV_ACCESS_ON_DEMAND) {
		if (mr_is_implicit(addr, length))
			return iova ? -EINVAL : 0;	/* the whole address space, iova = address */
		return wraps ? -EOVERFLOW : 0;	/* ib_init_umem_odp */
	}
	if (wraps)
		return -EINVAL;	/* ib_umem_get */
	return rocemu_proc_range_check(pid, addr, length, access & MR_ACCESS_WRITES);
}

/*
 * Bytes an MR pins, as ib_umem_get counts them against RLIMIT_MEMLOCK:
 * the pages of its range. Neither an ODP MR nor device memory (the
 * daemon's own) is pinned.
 */
static struct rocemu_amount mr_amount(const struct rocemu_mm *mm, uint32_t access, uint64_t addr,
				      uint64_t length)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);

	if ((access & IBV_ACCESS_ON_DEMAND) || !mm || mm->pid == getpid() || !length)
		return ROCEMU_OBJ_ONLY;
	return (struct rocemu_amount){
		.pinned = ((addr + length + page - 1) & ~(page - 1)) - (addr & ~(page - 1))
	};
}

/*
 * A plain MR's pages are watched before they are checked, so that no unmap
 * between the two goes unseen: its generation, or ROCEMU_MM_FOLLOWS.
 */
static uint64_t mr_watch(struct rocemu_mm *mm, uint64_t addr, uint64_t length, uint32_t access)
{
	if ((access & IBV_ACCESS_ON_DEMAND) || !length || addr + length < addr)
		return ROCEMU_MM_FOLLOWS;
	return rocemu_mm_watch_range(mm, addr, length);
}

static void mr_unwatch(struct rocemu_mm *mm, uint64_t addr, uint64_t length, uint64_t gen)
{
	if (gen != ROCEMU_MM_FOLLOWS)
		rocemu_mm_unwatch_range(mm, addr, length);
}

static struct rocemu_mr *mr_lookup(struct rocemu_client *c, uint32_t handle)
{
	struct rocemu_mr *mr = rocemu_obj_lookup(c->emu, &rocemu_mr_kind, c->ufile, handle);

	/* Indirect mkeys are not MRs to import, rereg or dereg: DESTROY_MKEY frees them. */
	return mr && !mr->indirect ? mr : NULL;
}

void rocemu_mr_resp(const struct rocemu_mr *mr, struct rocemu_reg_mr_resp *resp)
{
	resp->handle = mr->handle;
	resp->lkey = mr->lkey;
	resp->rkey = mr->rkey;
	resp->reserved = 0;
	resp->length = mr->length;
}

int rocemu_mr_create(struct rocemu_client *c, struct rocemu_pd *pd, uint32_t access, struct rocemu_mm *mm,
		     uint64_t addr, uint64_t length, uint64_t iova, struct rocemu_mr **out)
{
	struct rocemu_mr *mr;
	int err;

	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return -ENOMEM;
	err = rocemu_charge(c, &mr->charge, ROCEMU_RES_MR, mr_amount(mm, access, addr, length));
	if (!err)
		err = rocemu_obj_add(c->emu, &rocemu_mr_kind, c->ufile, mr);
	if (err) {
		rocemu_uncharge(&mr->charge);
		free(mr);
		return err;
	}
	/* mlx5 style keys: index in the high 24 bits, a rolling variant below. */
	mr->lkey = mr->rkey = (mr->handle << 8) | c->emu->mr_key_variant++;
	/* 0x100 ends a receive WQE's SGE list (MLX5_INVALID_LKEY), 0x400 opens a UMR repeat block: never hand them out. */
	while (mr->lkey == MLX5_INVALID_LKEY || mr->lkey == ROCEMU_UMR_REPEAT_OP)
		mr->lkey = mr->rkey = (mr->handle << 8) | c->emu->mr_key_variant++;
	mr->pd = pd;
	mr->access = access;
	mr->mm = mm ? rocemu_mm_get(mm) : NULL;
	mr->mem_gen = ROCEMU_MM_FOLLOWS;
	mr->addr = addr;
	mr->length = length;
	mr->iova = iova;
	pd->users++;
	*out = mr;
	rocemu_log(ROCEMU_LOG_DEBUG, "%s mr %u pd %u lkey 0x%08x pid %d addr 0x%llx len %llu access 0x%x",
		   c->dev->name, mr->handle, pd->pdn, mr->lkey, mm ? (int)mm->pid : 0,
		   (unsigned long long)addr,
		   (unsigned long long)length, access);
	return 0;
}

int rocemu_mr_reg(struct rocemu_client *c, const struct rocemu_reg_mr_req *req,
		  struct rocemu_reg_mr_resp *resp)
{
	struct rocemu_pd *pd = rocemu_pd_lookup(c, req->pdn);
	struct rocemu_mr *mr;
	uint64_t gen;
	int err;

	if (!pd)
		return -EINVAL;
	err = rocemu_mr_access_check(req->access);
	if (err)
		return err;
	gen = mr_watch(c->mm, req->addr, req->length, req->access);
	err = mr_range_check(c->pid, req->addr, req->length, req->iova, req->access);
	if (!err)
		err = rocemu_mr_create(c, pd, req->access, c->mm, req->addr, req->length, req->iova,
				       &mr);
	if (err) {
		mr_unwatch(c->mm, req->addr, req->length, gen);
		return err;
	}
	mr->mem_gen = gen;
	rocemu_mr_resp(mr, resp);
	return 0;
}

int rocemu_mr_import(struct rocemu_client *c, uint32_t handle, struct rocemu_reg_mr_resp *resp)
{
	struct rocemu_mr *mr = mr_lookup(c, handle);

	if (!mr)
		return -ENOENT;
	rocemu_mr_resp(mr, resp);
	return 0;
}

/* mr now covers [addr, addr + length) of mm as of gen; what it watched before, it leaves. */
static void mr_translate(struct rocemu_mr *mr, struct rocemu_mm *mm, uint64_t addr,
			 uint64_t length, uint64_t gen)
{
	struct rocemu_mm *old = mr->mm;
	uint64_t old_addr = mr->addr, old_length = mr->length, old_gen = mr->mem_gen;

	mr->mm = rocemu_mm_get(mm);
	mr->addr = addr;
	mr->length = length;
	mr->mem_gen = gen;
	mr_unwatch(old, old_addr, old_length, old_gen);
	rocemu_mm_put(old);
}

int rocemu_mr_rereg(struct rocemu_client *c, const struct rocemu_rereg_mr_req *req,
		    struct rocemu_reg_mr_resp *resp)
{
	struct rocemu_mr *mr = mr_lookup(c, req->handle);
	struct rocemu_pd *pd;
	uint64_t addr, length, iova, gen;
	struct rocemu_mm *mm;
	uint32_t access;
	int err;

	/* A DM MR's translation is the device's: uverbs refuses rereg on it. */
	if (!mr || mr->dm || !req->flags || (req->flags & ~MR_REREG_FLAGS))
		return -EINVAL;
	if (mr->bound_mws)
		return -EBUSY;
	pd = mr->pd;
	access = mr->access;
	addr = mr->addr;
	length = mr->length;
	iova = mr->iova;
	mm = mr->mm;
	if (req->flags & IBV_REREG_MR_CHANGE_PD) {
		pd = rocemu_pd_lookup(c, req->pdn);
		if (!pd)
			return -EINVAL;
	}
	if (req->flags & IBV_REREG_MR_CHANGE_ACCESS) {
		err = rocemu_mr_access_check(req->access);
		if (err)
			return err;
		access = req->access;
	}
	if (req->flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		addr = req->addr;
		length = req->length;
		iova = req->iova;
		mm = c->mm;	/* the new translation is the caller's memory, as uverbs takes it */
	}
	gen = mr_watch(mm, addr, length, access);
	err = mr_range_check(mm->pid, addr, length, iova, access);
	if (!err)
		err = rocemu_charge_change(&mr->charge, mr_amount(mm, access, addr, length));
	if (err) {
		mr_unwatch(mm, addr, length, gen);
		return err;
	}

	mr->pd->users--;
	pd->users++;
	mr->pd = pd;
	mr->access = access;
	mr_translate(mr, mm, addr, length, gen);
	mr->iova = iova;
	mr->invalid = false;
	rocemu_mr_resp(mr, resp);
	rocemu_log(ROCEMU_LOG_DEBUG, "%s mr %u rereg pd %u addr 0x%llx len %llu access 0x%x",
		   c->dev->name, mr->handle, pd->pdn, (unsigned long long)addr,
		   (unsigned long long)length, access);
	return 0;
}

void rocemu_mr_free(struct rocemu_emu *emu, struct rocemu_mr *mr)
{
	rocemu_log(ROCEMU_LOG_DEBUG, "%s mr %u dereg", mr->file->dev->name, mr->handle);
	rocemu_obj_remove(emu, &rocemu_mr_kind, mr);
	if (mr->mm) {
		mr_unwatch(mr->mm, mr->addr, mr->length, mr->mem_gen);
		rocemu_mm_put(mr->mm);
	}
	mr->pd->users--;
	if (mr->dm)
		mr->dm->users--;
	rocemu_uncharge(&mr->charge);
	free(mr->indirect);
	free(mr);
}

ROCEMU_OBJ_KIND(rocemu_mr_kind, struct rocemu_mr, struct rocemu_ufile, mrs, mrs, file, handle, node,
		rocemu_mr_free, .first = 1, .max = ROCEMU_MAX_MR * ROCEMU_MAX_DEVICES);

int rocemu_mr_invalidate(struct rocemu_mem_owner owner, uint32_t key, bool remote)
{
	struct rocemu_mkey_ref ref;
	int err = rocemu_mkey_resolve(owner, key, ROCEMU_MKEY_INVALIDATE, 0, 0, 0, &ref);

	if (err)
		return err;
	if (ref.mw)
		return rocemu_mw_invalidate(ref.mw);
	if (remote && ref.mr->indirect && !ref.mr->indirect->remote_invalidate)
		return -EACCES;
	ref.mr->invalid = true;
	return 0;
}

int rocemu_mr_dereg(struct rocemu_client *c, uint32_t handle)
{
	struct rocemu_mr *mr = mr_lookup(c, handle);

	if (!mr)
		return -EINVAL;
	if (mr->bound_mws)
		return -EBUSY;
	rocemu_mr_free(c->emu, mr);
	return 0;
}

int rocemu_mr_advise(struct rocemu_client *c, const struct rocemu_advise_mr_req *req,
		     struct rocemu_advise_mr_resp *resp)
{
	const struct rocemu_pd *pd = rocemu_pd_lookup(c, req->pdn);
	bool flush = req->flags & IBV_ADVISE_MR_FLAG_FLUSH;
	unsigned int i;
	int err;

	memset(resp, 0, sizeof(*resp));
	/* uverbs' checks of the PD, the flags and the list, then mlx5_ib_advise_mr's. */
	if (!pd || (req->flags & ~(uint32_t)IBV_ADVISE_MR_FLAG_FLUSH) || !req->num_sge ||
	    req->num_sge > ROCEMU_ADVISE_MR_MAX_SGE)
		return -EINVAL;
	if (req->advice != IBV_ADVISE_MR_ADVICE_PREFETCH &&
	    req->advice != IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE &&
	    req->advice != IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT)
		return -EOPNOTSUPP;
	for (i = 0; i < req->num_sge; i++) {
		const struct ibv_sge *sge = &req->sge[i];

		err = rocemu_mkey_prefetch(c, pd, sge->lkey, sge->addr, sge->length,
					   req->advice == IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
					   &resp->range[i].addr);
		/* Without FLUSH the prefetch runs later and its faults are not reported. */
		if (err == -EFAULT && !flush)
			continue;
		if (err)
			return err;
		/* NO_FAULT maps only what is present: nothing to fault in. */
		if (req->advice != IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT)
			resp->range[i].length = sge->length;
	}
	rocemu_log(ROCEMU_LOG_DEBUG, "%s pd %u advise_mr advice %u flags 0x%x sges %u",
		   c->dev->name, pd->pdn, req->advice, req->flags, req->num_sge);
	return 0;
}
