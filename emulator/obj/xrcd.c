/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/obj/xrcd.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "rocemu/log.h"

static struct rocemu_xrcd *xrcd_of_file(struct rocemu_emu *emu, const struct rocemu_device *dev,
					uint64_t file_dev, uint64_t file_ino)
{
	struct rocemu_xrcd *x;

	rocemu_list_for_each(x, &emu->xrcds, struct rocemu_xrcd, node)
		if (x->shared && x->dev == dev && x->file_dev == file_dev && x->file_ino == file_ino)
			return x;
	return NULL;
}

static struct rocemu_xrcd *xrcd_new(struct rocemu_client *c, const struct stat *file)
{
	struct rocemu_xrcd *x = calloc(1, sizeof(*x));

	if (!x)
		return NULL;
	x->dev = c->dev;
	x->xrcdn = ++c->emu->xrcd_seq;
	x->shared = file != NULL;
	x->file_dev = file ? file->st_dev : 0;
	x->file_ino = file ? file->st_ino : 0;
	rocemu_list_init(&x->tgt_qps);
	rocemu_list_add_tail(&c->emu->xrcds, &x->node);
	return x;
}

int rocemu_xrcd_open(struct rocemu_client *c, const struct rocemu_open_xrcd_req *req,
		     struct rocemu_open_xrcd_resp *resp)
{
	struct rocemu_xrcd *x = NULL;
	struct rocemu_xrcd_open *o;
	struct stat file;
	int err;

	if (req->shared) {
		/* The file is the one of the fd the client sent, as uverbs takes it: no fd, no domain. */
		if (c->req_fd < 0 || fstat(c->req_fd, &file))
			return -EBADF;
		x = xrcd_of_file(c->emu, c->dev, file.st_dev, file.st_ino);
		if (!x && !(req->oflags & O_CREAT))
			return -EAGAIN;		/* ib_uverbs_open_xrcd: "need CREATE flag" */
		if (x && (req->oflags & O_EXCL))
			return -EINVAL;
	}
	o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	err = rocemu_charge(c, &o->charge, ROCEMU_RES_XRCD, ROCEMU_OBJ_ONLY);
	if (!err)
		err = rocemu_obj_add(c->emu, &rocemu_xrcd_open_kind, c, o);
	if (err)
		goto fail;
	if (!x)
		x = xrcd_new(c, req->shared ? &file : NULL);
	if (!x) {
		rocemu_obj_remove(c->emu, &rocemu_xrcd_open_kind, o);
		err = -ENOMEM;
		goto fail;
	}
	x->opens++;
	o->xrcd = x;
	resp->handle = o->handle;
	resp->xrcdn = x->xrcdn;
	rocemu_log(ROCEMU_LOG_DEBUG, "%s xrcd %u open %u (%u opens)", c->dev->name, x->xrcdn,
		   o->handle, x->opens);
	return 0;

fail:
	rocemu_uncharge(&o->charge);
	free(o);
	return err;
}

struct rocemu_xrcd_open *rocemu_xrcd_lookup(struct rocemu_client *c, uint32_t handle)
{
	return rocemu_obj_lookup(c->emu, &rocemu_xrcd_open_kind, c, handle);
}

/* Drop an open whatever uses it; the domain goes with its last open. */
static void xrcd_open_free(struct rocemu_emu *emu, struct rocemu_xrcd_open *o)
{
	struct rocemu_xrcd *x = o->xrcd;

	rocemu_log(ROCEMU_LOG_DEBUG, "%s xrcd %u close %u (%u opens left)", o->owner->dev->name,
		   x->xrcdn, o->handle, x->opens - 1);
	rocemu_obj_remove(emu, &rocemu_xrcd_open_kind, o);
	rocemu_uncharge(&o->charge);
	free(o);
	if (--x->opens)
		return;
	rocemu_list_del(&x->node);
	free(x);
}

ROCEMU_OBJ_KIND(rocemu_xrcd_open_kind, struct rocemu_xrcd_open, struct rocemu_client, xrcd_opens,
		xrcd_opens, owner, handle, node, xrcd_open_free, .first = 1,
		.max = ROCEMU_MAX_XRCD_OPENS);

int rocemu_xrcd_close(struct rocemu_client *c, uint32_t handle)
{
	struct rocemu_xrcd_open *o = rocemu_xrcd_lookup(c, handle);

	if (!o)
		return -EINVAL;
	if (o->users)
		return -EBUSY;
	xrcd_open_free(c->emu, o);
	return 0;
}
