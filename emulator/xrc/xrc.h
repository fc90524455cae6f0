/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The XRC transport (IBTA Annex A14): RC with an XRCETH after the BTH of
 * every request, naming the SRQ at the target that takes the message.
 * XRC runs RC's engines (rc/), fed the differences as data: the opcode
 * class 0xA0 the segmenter and the acknowledges put on the wire, the SRQ
 * number an initiator's WQE carries into XRCETH, and the SRQ the
 * responder takes receive WQEs from (and whose CQ, PD and process the
 * message reaches). What is XRC's own is here: a target's references
 * (the creator's and those of ibv_open_qp) and the SRQ an XRCETH selects.
 * Functions return 0 or -errno.
 */
#ifndef ROCEMU_EMULATOR_XRC_H
#define ROCEMU_EMULATOR_XRC_H

#include <stdbool.h>
#include <stdint.h>

#include "emulator/base/list.h"
#include "emulator/core/limits.h"

struct rocemu_client;
struct rocemu_open_qp_req;
struct rocemu_qp;
struct rocemu_xrcd_open;

/* An ibv_open_qp reference of client to an XRC target. */
struct rocemu_xrc_ref {
	struct rocemu_list qp_node;	/* in qp->xrc_refs */
	struct rocemu_list client_node;	/* in client->xrc_refs */
	struct rocemu_client *client;
	struct rocemu_xrcd_open *xrcd_open;	/* the client's open of the domain it holds */
	uint64_t user_qp;		/* the app's struct ibv_qp * */
	struct rocemu_charge charge;	/* limits.h */
};

/*
 * ibv_open_qp: a reference of c to the target req->qpn of the domain
 * open req->xrcd. -EINVAL when c has no such open or the domain no such
 * target (ib_open_qp), or for another QP type.
 */
int rocemu_xrc_open(struct rocemu_client *c, const struct rocemu_open_qp_req *req);
/* c's context closes: its ibv_open_qp references go. */
void rocemu_xrc_client_release(struct rocemu_client *c);

#endif /* ROCEMU_EMULATOR_XRC_H */
