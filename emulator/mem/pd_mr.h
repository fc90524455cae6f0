/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Memory regions, on the protection domains of pd.h. An MR records
 * (address space, address, length, access) of the registering process's
 * memory, or of the daemon's own for device memory; the DMA engine later
 * reaches it through that address space (mm.h) after checking bounds, PD
 * and access. It belongs to the ufile of the context that made it
 * (emulator/mem/ufile.h), so every context of that ufile may use it.
 * Functions return 0 or -errno; a handle of another ufile is -EINVAL
 * (-ENOENT to import, as uverbs).
 */
#ifndef ROCEMU_EMULATOR_PD_MR_H
#define ROCEMU_EMULATOR_PD_MR_H

#include <stdbool.h>
#include <stdint.h>

#include "emulator/core/client.h"
#include "emulator/core/object.h"
#include "emulator/mem/mkey.h"
#include "emulator/mem/pd.h"
#include "emulator/mem/ufile.h"

struct rocemu_mm;

struct rocemu_mr {
	struct rocemu_ufile *file;
	struct rocemu_list node;	/* in file->mrs */
	uint32_t handle;
	struct rocemu_charge charge;	/* limits.h: an MR pins its pages, ODP's and DM's excepted */
	uint32_t lkey, rkey;
	struct rocemu_pd *pd;
	struct rocemu_dm *dm;		/* device memory it covers, or NULL */
	uint32_t access;
	struct rocemu_mm *mm;		/* whose memory: the registering process's, the daemon's (DM), or NULL */
	uint64_t mem_gen;		/* reports of unmaps after it take memory away (mm_watch.h) */
	uint64_t addr;			/* in mm */
	uint64_t length;
	uint64_t iova;
	bool invalid;			/* after LOCAL_INV / SEND_WITH_INV: no key reaches it */
	uint32_t bound_mws;		/* windows bound to it: it stays as it is while any */
	struct rocemu_mkey_layout *indirect;	/* an indirect mkey's (mkey_indirect.h), else NULL */
};

/*
 * Register req->addr/length: -EINVAL for a bad PD, access or length 0,
 * -EFAULT for memory not mapped (or not writable when write access is
 * asked). With IBV_ACCESS_ON_DEMAND nothing need be mapped yet; address 0
 * and length UINT64_MAX is the implicit MR over the whole address space
 * (iova 0, else -EINVAL); another range that wraps is -EOVERFLOW.
 */
int rocemu_mr_reg(struct rocemu_client *c, const struct rocemu_reg_mr_req *req,
		  struct rocemu_reg_mr_resp *resp);
/*
 * A new MR of c's ufile on pd over [addr, addr + length) of mm (NULL: no
 * memory), keyed from iova, following the mapping (ROCEMU_MM_FOLLOWS);
 * access already checked. -ENOMEM past max_mr.
 */
int rocemu_mr_create(struct rocemu_client *c, struct rocemu_pd *pd, uint32_t access, struct rocemu_mm *mm,
		     uint64_t addr, uint64_t length, uint64_t iova, struct rocemu_mr **out);
/* Access flags an MR may have (IBTA C10-20 included): 0 or -EINVAL. */
int rocemu_mr_access_check(uint32_t access);
/* What REG_MR and its kin answer about mr. */
void rocemu_mr_resp(const struct rocemu_mr *mr, struct rocemu_reg_mr_resp *resp);
/* IMPORT_MR: handle, keys and length of MR handle of c's ufile; -ENOENT if none. */
int rocemu_mr_import(struct rocemu_client *c, uint32_t handle, struct rocemu_reg_mr_resp *resp);
/*
 * Change translation, PD and/or access per req->flags; the keys stay and
 * the MR is valid again, as if deregistered and registered anew.
 * -EBUSY while windows are bound to it.
 */
int rocemu_mr_rereg(struct rocemu_client *c, const struct rocemu_rereg_mr_req *req,
		    struct rocemu_reg_mr_resp *resp);
/*
 * Invalidate key, an MR's or a type 2 window's, for owner (LOCAL_INV,
 * SEND_WITH_INV when remote): later accesses through it fail. Again on
 * an invalid MR is a no-op. Errors as rocemu_mkey_resolve, -EINVAL for a
 * type 1 window, -EACCES remotely for an indirect mkey created without
 * remote invalidation.
 */
int rocemu_mr_invalidate(struct rocemu_mem_owner owner, uint32_t key, bool remote);
/* -EBUSY while windows are bound to it (IBTA 10.6.7.2.6, as rxe). */
int rocemu_mr_dereg(struct rocemu_client *c, uint32_t handle);
void rocemu_mr_free(struct rocemu_emu *emu, struct rocemu_mr *mr);
/* MRs and indirect mkeys as objects of their ufile (object.h): the handle is the key's index. */
extern const struct rocemu_obj_kind rocemu_mr_kind;
/*
 * ibv_advise_mr: check req's SGEs as uverbs and mlx5 do (-EINVAL for a
 * bad PD, flags or list, -EOPNOTSUPP for another advice, then per SGE
 * the rocemu_mkey_prefetch errors; a range outside its MR fails only
 * with IBV_ADVISE_MR_FLAG_FLUSH) and say in resp what the shim faults in.
 */
int rocemu_mr_advise(struct rocemu_client *c, const struct rocemu_advise_mr_req *req,
		     struct rocemu_advise_mr_resp *resp);

#endif /* ROCEMU_EMULATOR_PD_MR_H */
