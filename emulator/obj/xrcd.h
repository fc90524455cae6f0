/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * XRC domains (ibv_open_xrcd(3)). A domain is the device's, not a
 * context's: every context that opens it through the same file (inode)
 * gets it, as the kernel's per-device inode tree gives it. Each open is a
 * handle of its context; the domain goes with its last open. Functions
 * return 0 or -errno.
 */
#ifndef ROCEMU_EMULATOR_XRCD_H
#define ROCEMU_EMULATOR_XRCD_H

#include <stdbool.h>
#include <stdint.h>

#include "emulator/core/client.h"
#include "emulator/core/object.h"

#define ROCEMU_MAX_XRCD_OPENS 65536

struct rocemu_xrcd {
	struct rocemu_list node;	/* in emu->xrcds */
	struct rocemu_device *dev;
	uint32_t xrcdn;			/* for logs and reports */
	bool shared;			/* opened through a file: found by (file_dev, file_ino) */
	uint64_t file_dev, file_ino;
	uint32_t opens;			/* handles of any context naming it */
	struct rocemu_list tgt_qps;	/* its XRC targets (xrc.h): ibv_open_qp, an SRQ going */
};

/* One context's open of a domain: its handle; what was created through it counts in users. */
struct rocemu_xrcd_open {
	struct rocemu_list node;	/* in owner->xrcd_opens */
	struct rocemu_client *owner;
	uint32_t handle;
	struct rocemu_charge charge;	/* limits.h */
	uint32_t users;			/* XRC SRQs and QPs created on this open */
	struct rocemu_xrcd *xrcd;
};

/*
 * Open a domain: a new one when !req->shared; else the domain of the
 * file, made when absent and O_CREAT is set. -EAGAIN: absent without
 * O_CREAT; -EINVAL: present with O_EXCL (as the kernel's uverbs).
 */
int rocemu_xrcd_open(struct rocemu_client *c, const struct rocemu_open_xrcd_req *req,
		     struct rocemu_open_xrcd_resp *resp);
/* Close handle: -EINVAL when c has no such open, -EBUSY while objects use it. */
int rocemu_xrcd_close(struct rocemu_client *c, uint32_t handle);
/* The open handle of c, or NULL. */
struct rocemu_xrcd_open *rocemu_xrcd_lookup(struct rocemu_client *c, uint32_t handle);
/* Opens as objects of their context (object.h): its closing drops each, whatever uses it. */
extern const struct rocemu_obj_kind rocemu_xrcd_open_kind;

#endif /* ROCEMU_EMULATOR_XRCD_H */
