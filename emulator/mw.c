/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/mw.h"

#include <errno.h>
#include <stdlib.h>
#include <infiniband/verbs.h>

#include "emulator/pd_mr.h"
#include "emulator/qp.h"
#include "rocemu/log.h"

#define WINDOW_ACCESS (IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)
#define KEY_INDEX(key) (((key) & ~ROCEMU_MW_KEY_FLAG) >> 8)

static struct rocemu_mw *mw_by_key(const struct rocemu_emu *emu, uint32_t key)
{
	struct rocemu_mw *mw;

	if (!rocemu_mw_is_key(key))
		return NULL;
	mw = rocemu_idtable_get(&emu->mws, KEY_INDEX(key));
	return mw && (mw->rkey >> 8) == (key >> 8) ? mw : NULL;
}

static const struct rocemu_mr *mr_by_key(const struct rocemu_emu *emu, uint32_t key)
{
	const struct rocemu_mr *mr = rocemu_idtable_get(&emu->mrs, key >> 8);

	return mr && mr->lkey == key && !mr->invalid ? mr : NULL;
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
	err = rocemu_idtable_alloc(&c->emu->mws, mw, &mw->handle);
	if (err) {
		free(mw);
		return err;
	}
	mw->owner = c;
	mw->pd = pd;
	mw->type = req->type;
	mw->rkey = ROCEMU_MW_KEY_FLAG | mw->handle << 8 | (c->emu->mr_key_variant++ & 0xff);
	pd->users++;
	rocemu_list_add_tail(&c->mws, &mw->node);
	resp->handle = mw->handle;
	resp->rkey = mw->rkey;
	rocemu_log(ROCEMU_LOG_DEBUG, "%s mw %u type %u pd %u rkey 0x%08x", c->dev->name,
		   mw->handle, mw->type, pd->pdn, mw->rkey);
	return 0;
}

void rocemu_mw_free(struct rocemu_emu *emu, struct rocemu_mw *mw)
{
	rocemu_idtable_remove(&emu->mws, mw->handle);
	rocemu_list_del(&mw->node);
	mw->pd->users--;
	free(mw);
}

int rocemu_mw_dealloc(struct rocemu_client *c, uint32_t handle)
{
	struct rocemu_mw *mw = rocemu_idtable_get(&c->emu->mws, handle);

	if (!mw || mw->owner != c)
		return -EINVAL;
	rocemu_mw_free(c->emu, mw);
	return 0;
}

/* The checks of IBTA 10.6.7.2 (rxe_check_bind_mw) before anything changes. */
static int bind_check(const struct rocemu_qp *qp, const struct rocemu_mw *mw,
		      const struct rocemu_send_wqe *w, const struct rocemu_mr **mrp)
{
	const struct rocemu_mr *mr;

	if (mw->owner != qp->owner || mw->pd != qp->pd)
		return -EPERM;
	if ((w->bind_new_rkey >> 8) != (mw->rkey >> 8) || (w->bind_access & ~WINDOW_ACCESS))
		return -EINVAL;
	if (mw->type == IBV_MW_TYPE_2 && mw->bound)
		return -EBUSY;	/* a type 2 window is invalidated before it binds again */
	*mrp = NULL;
	if (mw->type == IBV_MW_TYPE_1 && !w->bind_length)
		return 0;	/* unbind */
	mr = mr_by_key(qp->owner->emu, w->bind_mr_key);
	if (!mr || mr->owner != qp->owner)
		return -ENOKEY;
	if (mr->pd != qp->pd)
		return -EPERM;
	if (!(mr->access & IBV_ACCESS_MW_BIND) ||
	    ((w->bind_access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	     !(mr->access & IBV_ACCESS_LOCAL_WRITE)))
		return -EACCES;
	if (w->bind_addr < mr->iova || w->bind_length > mr->length ||
	    w->bind_addr - mr->iova > mr->length - w->bind_length)
		return -ERANGE;
	*mrp = mr;
	return 0;
}

int rocemu_mw_bind(struct rocemu_qp *qp, const struct rocemu_send_wqe *w)
{
	struct rocemu_mw *mw = mw_by_key(qp->owner->emu, w->bind_mw_key);
	const struct rocemu_mr *mr;
	int err;

	if (!mw)
		return -ENOKEY;
	/* Executed already (the requester went back over it): nothing to do. */
	if (mw->rkey == w->bind_new_rkey && w->bind_new_rkey != w->bind_mw_key)
		return 0;
	err = bind_check(qp, mw, w, &mr);
	if (err)
		return err;
	mw->rkey = w->bind_new_rkey;
	mw->bound = mr != NULL;
	mw->qpn = qp->qpn;
	mw->mr_key = mr ? mr->lkey : 0;
	mw->access = w->bind_access;
	mw->addr = w->bind_addr;
	mw->length = w->bind_length;
	rocemu_log(ROCEMU_LOG_DEBUG, "%s qp 0x%06x mw %u rkey 0x%08x %s", qp->owner->dev->name,
		   qp->qpn, mw->handle, mw->rkey, mw->bound ? "bound" : "unbound");
	return 0;
}

int rocemu_mw_invalidate(const struct rocemu_qp *qp, uint32_t key)
{
	struct rocemu_mw *mw = mw_by_key(qp->owner->emu, key);

	if (!mw || mw->rkey != key)
		return -ENOKEY;
	if (mw->type != IBV_MW_TYPE_2)
		return -EINVAL;	/* IBTA C10-71.2.1: type 1 windows are not invalidated */
	if (mw->pd != qp->pd)
		return -EPERM;
	mw->bound = false;
	return 0;
}

int rocemu_mw_rkey(const struct rocemu_qp *qp, uint32_t key, uint64_t va, uint64_t len,
		   unsigned int access, uint64_t *addr)
{
	const struct rocemu_mw *mw = mw_by_key(qp->owner->emu, key);
	const struct rocemu_mr *mr;

	if (!mw || mw->rkey != key || !mw->bound)
		return -ENOKEY;
	if (mw->pd != qp->pd || (mw->type == IBV_MW_TYPE_2 && mw->qpn != qp->qpn))
		return -EPERM;
	if ((mw->access & access) != access)
		return -EACCES;
	if (va < mw->addr || len > mw->length || va - mw->addr > mw->length - len)
		return -ERANGE;
	mr = mr_by_key(qp->owner->emu, mw->mr_key);
	if (!mr || va < mr->iova || len > mr->length || va - mr->iova > mr->length - len)
		return -ENOKEY;	/* the MR went away or changed under the window */
	*addr = mr->addr + (va - mr->iova);
	return 0;
}
