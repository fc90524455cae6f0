/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/mem/mkey.h"

#include <errno.h>
#include <stdbool.h>
#include <infiniband/verbs.h>

#include "emulator/core/client.h"
#include "emulator/mem/mw.h"
#include "emulator/mem/pd_mr.h"

/* [va, va + len) inside [start, start + length), without overflow. */
static bool in_range(uint64_t va, uint64_t len, uint64_t start, uint64_t length)
{
	return va >= start && len <= length && va - start <= length - len;
}

/* Keys are (index << 8) | variant: the index finds the object, the whole key must match. */
static struct rocemu_mr *mr_of_key(const struct rocemu_emu *emu, uint32_t key)
{
	struct rocemu_mr *mr = rocemu_idtable_get(&emu->mrs, key >> 8);

	return mr && mr->lkey == key ? mr : NULL;
}

static struct rocemu_mw *mw_of_key(const struct rocemu_emu *emu, uint32_t key)
{
	struct rocemu_mw *mw = rocemu_idtable_get(&emu->mws, rocemu_mw_key_index(key));

	return mw && mw->rkey == key ? mw : NULL;
}

/* Validity, rights, then bounds of an MR access; the address in the MR's process. */
static int mr_access(const struct rocemu_mr *mr, uint64_t va, uint64_t len, unsigned int access,
		     uint64_t *addr)
{
	if (mr->invalid)
		return -ENOKEY;
	if ((mr->access & access) != access)
		return -EACCES;
	if (!in_range(va, len, mr->iova, mr->length))
		return -ERANGE;
	*addr = mr->addr + (va - mr->iova);
	return 0;
}

/* A window reaches only the MR it is bound to, whose rights it was checked against then. */
static int window_access(struct rocemu_mem_owner owner, const struct rocemu_mw *mw, uint64_t va,
			 uint64_t len, unsigned int access, uint64_t *addr)
{
	if (!mw->mr)
		return -ENOKEY;
	if (mw->type == IBV_MW_TYPE_2 && mw->qpn != owner.qpn)
		return -EPERM;
	if ((mw->access & access) != access)
		return -EACCES;
	if (!in_range(va, len, mw->addr, mw->length))
		return -ERANGE;
	return mr_access(mw->mr, va, len, 0, addr);
}

int rocemu_mkey_prefetch(const struct rocemu_client *c, const struct rocemu_pd *pd, uint32_t lkey,
			 uint64_t va, uint64_t len, bool write, uint64_t *addr)
{
	const struct rocemu_mr *mr = mr_of_key(c->emu, lkey);

	/*
	 * mlx5's get_prefetchable_mr: only ODP MRs can be found for a prefetch;
	 * the shim faults pages in its own process, so only MRs over its memory.
	 */
	if (!mr || mr->file != c->ufile || mr->mm != c->mm ||
	    !(mr->access & IBV_ACCESS_ON_DEMAND))
		return -ENOENT;
	if (mr->pd != pd)
		return -EPERM;
	if (write && !(mr->access & (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND)))
		return -EPERM;
	if (!in_range(va, len, mr->iova, mr->length))
		return -EFAULT;
	*addr = mr->addr + (va - mr->iova);
	return 0;
}

int rocemu_mkey_resolve(struct rocemu_mem_owner owner, uint32_t key, enum rocemu_mkey_use use,
			uint64_t va, uint64_t len, unsigned int access, struct rocemu_mkey_ref *ref)
{
	const struct rocemu_emu *emu = owner.client->emu;
	const struct rocemu_ufile *file;
	const struct rocemu_pd *pd;

	*ref = (struct rocemu_mkey_ref){ 0 };
	if (rocemu_mw_is_key(key)) {
		ref->mw = use == ROCEMU_MKEY_LOCAL ? NULL : mw_of_key(emu, key);
		if (!ref->mw)
			return -ENOKEY;	/* windows give remote access only */
		ref->mr = ref->mw->mr;
		file = ref->mw->owner->ufile;
		pd = ref->mw->pd;
	} else {
		ref->mr = mr_of_key(emu, key);
		if (!ref->mr)
			return -ENOKEY;
		file = ref->mr->file;
		pd = ref->mr->pd;
	}
	/* The contexts of one ufile share keys (imports), as on one uverbs file. */
	if (file != owner.client->ufile)
		return -ENOKEY;
	if (pd != owner.pd)
		return -EPERM;
	if (use == ROCEMU_MKEY_INVALIDATE)
		return 0;
	if (ref->mr) {
		ref->mm = ref->mr->mm;
		ref->gen = ref->mr->mem_gen;
	}
	if (ref->mw)
		return window_access(owner, ref->mw, va, len, access, &ref->addr);
	return mr_access(ref->mr, va, len, access, &ref->addr);
}
