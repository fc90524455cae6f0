/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Protection domains: what MRs, windows, device memory MRs, indirect
 * mkeys, QPs and SRQs are made on, and what an access is checked against.
 * A PD belongs to the ufile of the context that made it (emulator/mem/ufile.h),
 * so every context of that ufile may use it. Functions return 0 or -errno.
 */
#ifndef ROCEMU_EMULATOR_PD_H
#define ROCEMU_EMULATOR_PD_H

#include <stdint.h>

#include "emulator/core/client.h"
#include "emulator/core/object.h"
#include "emulator/mem/ufile.h"

struct rocemu_pd {
	struct rocemu_ufile *file;
	struct rocemu_list node;	/* in file->pds */
	uint32_t pdn;
	struct rocemu_charge charge;	/* limits.h */
	uint32_t users;			/* MRs and QPs on it */
};

int rocemu_pd_alloc(struct rocemu_client *c, uint32_t *pdn);
/* -EBUSY while MRs or QPs use it. */
int rocemu_pd_dealloc(struct rocemu_client *c, uint32_t pdn);
/* The PD pdn of c's ufile, or NULL. */
struct rocemu_pd *rocemu_pd_lookup(struct rocemu_client *c, uint32_t pdn);
/* IMPORT_PD: -ENOENT unless pdn is a PD of c's ufile. */
int rocemu_pd_import(struct rocemu_client *c, uint32_t pdn);
void rocemu_pd_free(struct rocemu_emu *emu, struct rocemu_pd *pd);
/* PDs as objects of their ufile (object.h), freed when the ufile goes. */
extern const struct rocemu_obj_kind rocemu_pd_kind;

#endif /* ROCEMU_EMULATOR_PD_H */
