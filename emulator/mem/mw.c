/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/mem/mw.h"

#include <errno.h>
#include <stdlib.h>
#include <infiniband/verbs.h>

#include "emulator/mem/mkey.h"
#include "emulator/mem/pd_mr.h"
#include "rocemu/log.h"

#define WINDOW_ACCESS (IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)

/* A BIND names its window by handle, as a UMR names an mkey: the variant is what it changes. */
static struct rocemu_mw *mw_by_handle(const struct rocemu_emu *emu, uint32_t key)
{
	return rocemu_mw_is_key(key) ? rocemu_idtable_get(&emu->mws, rocemu_mw_key_index(key)) : NULL;
}

static void mw_unbind(struct rocemu_mw *mw)
{
	if (mw->mr)
		mw->mr->bound_mws--;
	mw->mr = NULL;
}

int rocemu_mw_alloc(struct rocemu_client *c, const struct rocemu_alloc_mw_req *req,
		    struct rocemu_alloc_mw_resp *resp)
{
	struct rocemu_pd *pd = rocemu_pd_lookup(c, req->pdn);
	struct rocemu_mw *mw;
	int err;

	if (!pd || (req->type != IBV_MW_TYPE_1 && req->type != IBV_MW_TYPE_2))
		return -EINVAL;
	mw = calloc(1, sizeof(*mw));
	if (!mw)
		return -ENOMEM;
	err = rocemu_charge(c, &mw->charge, ROCEMU_RES_MW, ROCEMU_OBJ_ONLY);
	if (!err)
		err = rocemu_obj_add(c->emu, &rocemu_mw_kind, c, mw);
	if (err) {
		rocemu_uncharge(&mw->charge);
		free(mw);
		return err;
	}
	mw->pd = pd;
	mw->type = req->type;
	mw->rkey = ROCEMU_MW_KEY_FLAG | mw->handle << 8 | (c->emu->mr_key_variant++ & 0xff);
	pd->users++;
	resp->handle = mw->handle;
	resp->rkey = mw->rkey;
	rocemu_log(ROCEMU_LOG_DEBUG, "%s mw %u type %u pd %u rkey 0x%08x", c->dev->name,
		   mw->handle, mw->type, pd->pdn, mw->rkey);
	return 0;
}

void rocemu_mw_free(struct rocemu_emu *emu, struct rocemu_mw *mw)
{
	mw_unbind(mw);
	rocemu_obj_remove(emu, &rocemu_mw_kind, mw);
	mw->pd->users--;
	rocemu_uncharge(&mw->charge);
	free(mw);
}

ROCEMU_OBJ_KIND(rocemu_mw_kind, struct rocemu_mw, struct rocemu_client, mws, mws, owner, handle,
		node, rocemu_mw_free, .first = 1, .max = ROCEMU_MAX_MW * ROCEMU_MAX_DEVICES);

int rocemu_mw_dealloc(struct rocemu_client *c, uint32_t handle)
{
	struct rocemu_mw *mw = rocemu_obj_lookup(c->emu, &rocemu_mw_kind, c, handle);

	if (!mw)
		return -EINVAL;
	rocemu_mw_free(c->emu, mw);
	return 0;
}

/* The checks of IBTA 10.6.7.2 (rxe_check_bind_mw) before anything changes. */
static int bind_check(struct rocemu_mem_owner owner, const struct rocemu_mw *mw,
		      const struct rocemu_mw_bind *b, struct rocemu_mr **mrp)
{
	unsigned int mr_rights = IBV_ACCESS_MW_BIND;
	struct rocemu_mkey_ref ref;
	int err;

	if (mw->owner != owner.client || mw->pd != owner.pd)
		return -EPERM;
	/* Local rights come from the MR: LOCAL_WRITE is accepted and means nothing, as on ConnectX. */
	if ((b->new_rkey >> 8) != (mw->rkey >> 8) ||
	    (b->access & ~(WINDOW_ACCESS | IBV_ACCESS_LOCAL_WRITE)))
		return -EINVAL;
	if (mw->type == IBV_MW_TYPE_2 && mw->mr)
		return -EBUSY;	/* a type 2 window is invalidated before it binds again */
	*mrp = NULL;
	if (mw->type == IBV_MW_TYPE_1 && !b->length)
		return 0;	/* unbind */
	/* As for an MR (C10-20): remote write or atomic through it needs local write on the MR. */
	if (b->access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC))
		mr_rights |= IBV_ACCESS_LOCAL_WRITE;
	err = rocemu_mkey_resolve(owner, b->mr_key, ROCEMU_MKEY_LOCAL, b->addr,
				  b->length, mr_rights, &ref);
	if (err)
		return err;
	*mrp = ref.mr;
	return 0;
}

int rocemu_mw_bind(struct rocemu_mem_owner owner, const struct rocemu_mw_bind *b)
{
	struct rocemu_mw *mw = mw_by_handle(owner.client->emu, b->mw_key);
	struct rocemu_mr *mr;
	int err;

	if (!mw)
		return -ENOKEY;
	/* Executed already (the requester went back over it): nothing to do. */
	if (mw->rkey == b->new_rkey && b->new_rkey != b->mw_key)
		return 0;
	err = bind_check(owner, mw, b, &mr);
	if (err)
		return err;
	mw_unbind(mw);
	if (mr)
		mr->bound_mws++;
	mw->mr = mr;
	mw->rkey = b->new_rkey;
	mw->qpn = owner.qpn;
	mw->access = b->access & WINDOW_ACCESS;
	mw->addr = b->addr;
	mw->length = b->length;
	rocemu_log(ROCEMU_LOG_DEBUG, "%s qp 0x%06x mw %u rkey 0x%08x %s", owner.client->dev->name,
		   owner.qpn, mw->handle, mw->rkey, mr ? "bound" : "unbound");
	return 0;
}

int rocemu_mw_invalidate(struct rocemu_mw *mw)
{
	if (mw->type != IBV_MW_TYPE_2)
		return -EINVAL;	/* IBTA C10-71.2.1: type 1 windows are not invalidated */
	mw_unbind(mw);
	return 0;
}
