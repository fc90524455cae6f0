/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Memory windows (IBTA 10.6.7), type 1 and 2: a remote-access rkey onto
 * part of an MR, bound by a BIND WQE in a send queue (ibv_bind_mw for type
 * 1, IBV_WR_BIND_MW for type 2) and, for type 2, usable only through the
 * QP that bound it and invalidated by LOCAL_INV / SEND_WITH_INV. A bound
 * window holds its MR, which cannot be deregistered or reregistered until
 * the window is unbound, invalidated or freed. Window rkeys have bit 31
 * set, so they never meet an MR key:
 * ROCEMU_MW_KEY_FLAG | (handle << 8) | 8-bit variant; emulator/mem/mkey.h
 * resolves them.
 * Functions return 0 or -errno.
 */
#ifndef ROCEMU_EMULATOR_MW_H
#define ROCEMU_EMULATOR_MW_H

#include <stdbool.h>
#include <stdint.h>

#include "emulator/core/client.h"
#include "emulator/core/object.h"
#include "emulator/mem/mkey.h"

#define ROCEMU_MW_KEY_FLAG 0x80000000u

struct rocemu_mw {
	struct rocemu_client *owner;
	struct rocemu_list node;	/* in owner->mws */
	uint32_t handle;
	struct rocemu_charge charge;	/* limits.h */
	uint32_t type;			/* IBV_MW_TYPE_1 / _2 */
	struct rocemu_pd *pd;
	uint32_t rkey;
	struct rocemu_mr *mr;		/* bound onto it (counted in its bound_mws), or NULL */
	uint32_t qpn;			/* type 2: the QP it is bound to */
	uint32_t access;		/* IBV_ACCESS_REMOTE_* */
	uint64_t addr, length;
};

static inline bool rocemu_mw_is_key(uint32_t key)
{
	return key & ROCEMU_MW_KEY_FLAG;
}

/* The handle in a window key. */
static inline uint32_t rocemu_mw_key_index(uint32_t key)
{
	return (key & ~ROCEMU_MW_KEY_FLAG) >> 8;
}

/* -EINVAL: bad PD or type. */
int rocemu_mw_alloc(struct rocemu_client *c, const struct rocemu_alloc_mw_req *req,
		    struct rocemu_alloc_mw_resp *resp);
int rocemu_mw_dealloc(struct rocemu_client *c, uint32_t handle);
void rocemu_mw_free(struct rocemu_emu *emu, struct rocemu_mw *mw);
/* Windows as objects of their context (object.h), freed when it closes. */
extern const struct rocemu_obj_kind rocemu_mw_kind;

/* What a BIND WQE asks (IBTA 10.6.7.2): the window, its next rkey, the MR, rights and range. */
struct rocemu_mw_bind {
	uint32_t mw_key, new_rkey, mr_key, access;
	uint64_t addr, length;
};

/* Execute bind b for owner: -EINVAL, -EPERM, -EACCES, -ERANGE, -ENOKEY as IBTA C10-72ff. */
int rocemu_mw_bind(struct rocemu_mem_owner owner, const struct rocemu_mw_bind *b);
/* Unbind type 2 window mw (LOCAL_INV, SEND_WITH_INV); -EINVAL for type 1 (IBTA C10-71.2.1). */
int rocemu_mw_invalidate(struct rocemu_mw *mw);

#endif /* ROCEMU_EMULATOR_MW_H */
