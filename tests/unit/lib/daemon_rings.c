/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * daemon_rings.h over the emulator's mlx5 ring format: a CQ, a QP, their
 * client, device and emulator as bare records, each call going through
 * the format's table as the engines' calls do.
 */
#include "tests/unit/lib/daemon_rings.h"

#include <stdlib.h>
#include <string.h>

#include "emulator/core/client.h"
#include "emulator/core/device.h"
#include "emulator/core/emu.h"
#include "emulator/mlx5/format.h"
#include "emulator/obj/cq.h"
#include "emulator/obj/qp.h"

_Static_assert(DAEMON_MAX_SGE == ROCEMU_MAX_SGE, "daemon_rings.h's SGE bound");
_Static_assert(DAEMON_MAX_INLINE == ROCEMU_MAX_INLINE, "daemon_rings.h's inline bound");

/* The owner a CQ or QP names: its client on a device of an emulator that traces nothing. */
struct daemon_owner {
	struct rocemu_emu *emu;
	struct rocemu_client client;
};

struct daemon_cq {
	struct daemon_owner owner;
	struct rocemu_cq cq;
};

struct daemon_qp {
	struct daemon_owner owner;
	struct rocemu_qp qp;
};

static const struct rocemu_ring_format *const format = &rocemu_ring_mlx5;

static void owner_init(struct daemon_owner *o)
{
	o->emu = calloc(1, sizeof(*o->emu));
	if (!o->emu)
		abort();
	o->emu->num_devices = 1;
	strcpy(o->emu->devices[0].name, "rocemu0");
	o->emu->devices[0].emu = o->emu;
	o->emu->devices[0].format = format;
	o->client.emu = o->emu;
	o->client.dev = &o->emu->devices[0];
}

struct daemon_cq *daemon_cq_new(void *ring, void *dbrec, uint32_t cqe_size, uint32_t ncqe)
{
	struct daemon_cq *d = calloc(1, sizeof(*d));

	if (!d)
		abort();
	owner_init(&d->owner);
	d->cq.owner = &d->owner.client;
	d->cq.cqn = 0x77;
	d->cq.layout = (struct rocemu_cq_layout){
		.cqn = 0x77, .ncqe = ncqe, .cqe_size = cqe_size,
		.dbrec_offset = (uint64_t)((char *)dbrec - (char *)ring),
	};
	d->cq.ring.addr = ring;
	/* As rocemu_cq_create: the ring's first entry made the hardware's. */
	d->cq.untouched = format->cq_ring_start(ring, cqe_size, ncqe, 0, 0);
	return d;
}

void daemon_cq_free(struct daemon_cq *cq)
{
	free(cq->owner.emu);
	free(cq);
}

bool daemon_cqe_write(struct daemon_cq *cq, const struct daemon_cqe *c)
{
	static const enum rocemu_cqe_kind kinds[] = {
		[DAEMON_CQE_SEND_DONE] = ROCEMU_CQE_SEND_DONE,
		[DAEMON_CQE_RECV_SEND] = ROCEMU_CQE_RECV_SEND,
		[DAEMON_CQE_RECV_SEND_IMM] = ROCEMU_CQE_RECV_SEND_IMM,
		[DAEMON_CQE_RECV_SEND_INV] = ROCEMU_CQE_RECV_SEND_INV,
		[DAEMON_CQE_RECV_WRITE_IMM] = ROCEMU_CQE_RECV_WRITE_IMM,
		[DAEMON_CQE_SEND_ERR] = ROCEMU_CQE_SEND_ERR,
		[DAEMON_CQE_RECV_ERR] = ROCEMU_CQE_RECV_ERR,
	};
	const struct rocemu_cqe_info info = {
		.kind = kinds[c->kind],
		.status = c->status,
		.wqe_opcode = c->wqe_opcode,
		.qpn = c->qpn,
		.wqe_counter = c->wqe_counter,
		.byte_cnt = c->byte_cnt,
		.imm = c->imm,
		.src_qp = c->src_qp,
		.srqn = c->srqn,
		.grh_ipv4 = c->grh_ipv4,
		.solicited = c->solicited,
		.scatter = c->scatter,
		.scatter_len = c->scatter_len,
	};

	return format->cqe_write(&cq->cq, &info);
}

struct daemon_qp *daemon_qp_new(void *map, const struct rocemu_qp_layout *layout,
				enum ibv_qp_type type)
{
	struct daemon_qp *d = calloc(1, sizeof(*d));

	if (!d)
		abort();
	owner_init(&d->owner);
	d->qp.owner = &d->owner.client;
	d->qp.qpn = layout->qpn;
	d->qp.type = type;
	d->qp.layout = *layout;
	d->qp.rings.addr = map;
	d->qp.rings.size = layout->size;
	return d;
}

void daemon_qp_free(struct daemon_qp *qp)
{
	free(qp->owner.emu);
	free(qp);
}

int daemon_sq_posted(const struct daemon_qp *qp, uint32_t bb)
{
	return format->sq_posted(&qp->qp, bb);
}

static void sges_out(const struct rocemu_sge *in, unsigned int n, struct daemon_sge *out)
{
	for (unsigned int i = 0; i < n; i++)
		out[i] = (struct daemon_sge){ .addr = in[i].addr, .length = in[i].length,
					      .key = in[i].key };
}

int daemon_parse_send(const struct daemon_qp *qp, uint32_t bb, uint32_t posted,
		      struct daemon_send_wqe *w)
{
	struct rocemu_send_wqe s;
	int ret;

	memset(&s, 0, sizeof(s));
	ret = format->parse_send(&qp->qp, bb, posted, &s);
	memset(w, 0, sizeof(*w));
	w->bbs = s.bbs;
	w->wqe_counter = s.wqe_counter;
	w->opcode = s.opcode;
	w->signaled = s.signaled;
	w->solicited = s.solicited;
	w->fence = s.fence;
	w->imm = s.imm;
	w->raddr = s.raddr;
	w->rkey = s.rkey;
	w->swap_add = s.swap_add;
	w->compare = s.compare;
	w->bind_mw_key = s.bind.mw_key;
	w->bind_new_rkey = s.bind.new_rkey;
	w->bind_mr_key = s.bind.mr_key;
	w->bind_access = s.bind.access;
	w->bind_addr = s.bind.addr;
	w->bind_length = s.bind.length;
	w->dqpn = s.dest.dqpn;
	w->qkey = s.dest.qkey;
	w->dc_key = s.dest.dc_key;
	memcpy(w->rgid, s.dest.rgid, sizeof(w->rgid));
	w->xrc_srqn = s.xrc_srqn;
	w->length = s.length;
	w->inline_len = s.inline_len;
	w->num_sge = s.num_sge;
	sges_out(s.sge, s.num_sge, w->sge);
	memcpy(w->inline_data, s.inline_data, s.inline_len);
	w->umr = s.umr;
	if (s.umr) {
		w->umr_key = s.umr_op.key;
		w->umr_ctrl = s.umr_op.ctrl;
		w->umr_mkc = s.umr_op.mkc;
		w->umr_xlat_len = s.umr_op.by_pointer ? 0 : s.umr_op.xlat_len;
		memcpy(w->umr_xlat, s.umr_op.xlat, w->umr_xlat_len);
	}
	return ret;
}

void daemon_peek_dc(const struct daemon_qp *qp, uint32_t bb, struct daemon_send_wqe *w,
		    uint16_t *stream)
{
	struct rocemu_send_dest dest;

	memset(&dest, 0, sizeof(dest));
	format->peek_dc(&qp->qp, bb, &dest, stream);
	memset(w, 0, sizeof(*w));
	w->dqpn = dest.dqpn;
	w->qkey = dest.qkey;
	w->dc_key = dest.dc_key;
	memcpy(w->rgid, dest.rgid, sizeof(w->rgid));
}

int daemon_rq_posted(const struct daemon_qp *qp, uint32_t counter)
{
	return rocemu_qp_rq_posted(&qp->qp, counter);
}

void daemon_parse_recv(const struct daemon_qp *qp, uint32_t counter, struct daemon_recv_wqe *w)
{
	struct rocemu_rq_ring rq = rocemu_qp_rq_ring(&qp->qp);
	struct rocemu_recv_wqe r;

	memset(&r, 0, sizeof(r));
	format->parse_recv(&rq, counter, &r);
	w->length = r.length;
	w->num_sge = r.num_sge;
	sges_out(r.sge, r.num_sge, w->sge);
}
