/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/obj/reserved_qpn.h"

#include <errno.h>
#include <stdlib.h>

#include "emulator/core/device.h"
#include "emulator/core/emu.h"
#include "net/roce/roce_hdr.h"
#include "rocemu/log.h"

_Static_assert(ROCEMU_FIRST_QPN + ROCEMU_MAX_QP * ROCEMU_MAX_DEVICES <= ROCEMU_FIRST_RESERVED_QPN,
	       "reserved QPNs above every QP's");
_Static_assert(ROCEMU_FIRST_RESERVED_QPN + ROCEMU_MAX_QP * ROCEMU_MAX_DEVICES <= ROCEMU_QPN_MASK,
	       "reserved QPNs are 24-bit QPNs");

static void reserved_free(struct rocemu_emu *emu, struct rocemu_reserved_qpn *r)
{
	rocemu_obj_remove(emu, &rocemu_reserved_qpn_kind, r);
	rocemu_uncharge(&r->charge);
	free(r);
}

ROCEMU_OBJ_KIND(rocemu_reserved_qpn_kind, struct rocemu_reserved_qpn, struct rocemu_client,
		reserved_qpns, reserved_qpns, owner, qpn, node, reserved_free,
		.first = ROCEMU_FIRST_RESERVED_QPN, .max = ROCEMU_MAX_QP * ROCEMU_MAX_DEVICES,
		.cyclic = true);

int rocemu_reserved_qpn_alloc(struct rocemu_client *c, uint32_t *qpn)
{
	struct rocemu_reserved_qpn *r = calloc(1, sizeof(*r));
	int err;

	if (!r)
		return -ENOMEM;
	/* One of the client's QPs, though none of the device's. */
	err = rocemu_charge_account(c->charge.acct, NULL, &r->charge, ROCEMU_RES_QP,
				    ROCEMU_OBJ_ONLY);
	if (!err)
		err = rocemu_obj_add(c->emu, &rocemu_reserved_qpn_kind, c, r);
	if (err) {
		rocemu_uncharge(&r->charge);
		free(r);
		return err;
	}
	*qpn = r->qpn;
	rocemu_log(ROCEMU_LOG_DEBUG, "%s qpn 0x%06x reserved", c->dev->name, r->qpn);
	return 0;
}

int rocemu_reserved_qpn_dealloc(struct rocemu_client *c, uint32_t qpn)
{
	struct rocemu_reserved_qpn *r = rocemu_obj_lookup(c->emu, &rocemu_reserved_qpn_kind, c, qpn);

	if (!r)
		return -EINVAL;
	reserved_free(c->emu, r);
	return 0;
}
