/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Protection domains: made, found by number in a ufile, imported, freed once nothing uses them. */
#include "emulator/mem/pd.h"

#include <errno.h>
#include <stdlib.h>

#include "rocemu/log.h"

int rocemu_pd_alloc(struct rocemu_client *c, uint32_t *pdn)
{
	struct rocemu_pd *pd;
	int err;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return -ENOMEM;
	err = rocemu_charge(c, &pd->charge, ROCEMU_RES_PD, ROCEMU_OBJ_ONLY);
	if (!err)
		err = rocemu_obj_add(c->emu, &rocemu_pd_kind, c->ufile, pd);
	if (err) {
		rocemu_uncharge(&pd->charge);
		free(pd);
		return err;
	}
	*pdn = pd->pdn;
	rocemu_log(ROCEMU_LOG_DEBUG, "%s pd %u alloc", c->dev->name, pd->pdn);
	return 0;
}

struct rocemu_pd *rocemu_pd_lookup(struct rocemu_client *c, uint32_t pdn)
{
	return rocemu_obj_lookup(c->emu, &rocemu_pd_kind, c->ufile, pdn);
}

int rocemu_pd_import(struct rocemu_client *c, uint32_t pdn)
{
	return rocemu_pd_lookup(c, pdn) ? 0 : -ENOENT;
}

void rocemu_pd_free(struct rocemu_emu *emu, struct rocemu_pd *pd)
{
	rocemu_log(ROCEMU_LOG_DEBUG, "%s pd %u dealloc", pd->file->dev->name, pd->pdn);
	rocemu_obj_remove(emu, &rocemu_pd_kind, pd);
	rocemu_uncharge(&pd->charge);
	free(pd);
}

ROCEMU_OBJ_KIND(rocemu_pd_kind, struct rocemu_pd, struct rocemu_ufile, pds, pds, file, pdn, node,
		rocemu_pd_free, .first = 1, .max = ROCEMU_MAX_PD * ROCEMU_MAX_DEVICES);

int rocemu_pd_dealloc(struct rocemu_client *c, uint32_t pdn)
{
	struct rocemu_pd *pd = rocemu_pd_lookup(c, pdn);

	if (!pd)
		return -EINVAL;
	if (pd->users)
		return -EBUSY;
	rocemu_pd_free(c->emu, pd);
	return 0;
}
