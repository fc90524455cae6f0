/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/wq/wq.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emulator/core/device.h"
#include "emulator/mem/pd.h"
#include "emulator/obj/cq.h"
#include "rocemu/log.h"
#include "rocemu/ring.h"

#define DBREC_BYTES 64
/* The flags a WQ may have here; DELAY_DROP wants a capability this device lacks. */
#define WQ_FLAGS (IBV_WQ_FLAGS_CVLAN_STRIPPING | IBV_WQ_FLAGS_SCATTER_FCS | \
		  IBV_WQ_FLAGS_PCI_WRITE_END_PADDING)
#define WQ_ATTRS (IBV_WQ_ATTR_STATE | IBV_WQ_ATTR_CURR_STATE | IBV_WQ_ATTR_FLAGS)

static const char *const state_names[] = {
	[IBV_WQS_RESET] = "RESET", [IBV_WQS_RDY] = "RDY", [IBV_WQS_ERR] = "ERR",
};

/* Size the ring as a QP's RQ of the same caps, and lay it out with its doorbell record. */
static int wq_layout(struct rocemu_wq *wq, const struct rocemu_create_wq_req *req)
{
	const struct ibv_qp_cap want = { .max_recv_wr = req->max_wr, .max_recv_sge = req->max_sge };
	struct rocemu_wq_sizes sizes;
	struct ibv_qp_cap granted;

	if (rocemu_wq_size(&want, IBV_QPT_RAW_PACKET, 0, &sizes))
		return -EINVAL;
	rocemu_wq_caps(&sizes, IBV_QPT_RAW_PACKET, &granted);
	wq->max_wr = granted.max_recv_wr;
	wq->max_sge = granted.max_recv_sge < ROCEMU_MAX_SGE ? granted.max_recv_sge : ROCEMU_MAX_SGE;
	wq->wqe_cnt = sizes.rq_wqes;
	wq->wqe_shift = sizes.rq_wqe_shift;
	wq->dbrec_offset = rocemu_page_align((size_t)wq->wqe_cnt << wq->wqe_shift);
	return 0;
}

int rocemu_wq_create(struct rocemu_client *c, const struct rocemu_create_wq_req *req,
		     struct rocemu_create_wq_resp *resp, int *fd)
{
	struct rocemu_pd *pd = rocemu_pd_lookup(c, req->pdn);
	struct rocemu_cq *cq = rocemu_cq_lookup(c, req->cqn);
	struct rocemu_wq *wq;
	size_t size;
	int err, ring_fd;

	if (req->create_flags & ~(uint32_t)WQ_FLAGS)
		return -EOPNOTSUPP;
	if (!pd || !cq || req->wq_type != IBV_WQT_RQ || !req->max_wr ||
	    req->max_wr > ROCEMU_MAX_QP_WR || req->max_sge > ROCEMU_MAX_SGE)
		return -EINVAL;
	wq = calloc(1, sizeof(*wq));
	if (!wq)
		return -ENOMEM;
	err = wq_layout(wq, req);
	if (err)
		goto fail;
	size = rocemu_page_align(wq->dbrec_offset + DBREC_BYTES);
	err = rocemu_charge(c, &wq->charge, ROCEMU_RES_QP, rocemu_ring_amount(size));
	if (err)
		goto fail;
	err = rocemu_obj_add(c->emu, &rocemu_wq_kind, c, wq);
	if (err)
		goto fail_charge;
	ring_fd = rocemu_shm_create("rocemu-wq", size, &wq->ring);
	if (ring_fd < 0) {
		err = ring_fd;
		rocemu_obj_remove(c->emu, &rocemu_wq_kind, wq);
		goto fail_charge;
	}
	wq->pd = pd;
	wq->cq = cq;
	wq->user_wq = req->user_wq;
	wq->flags = req->create_flags;
	wq->state = IBV_WQS_RESET;
	pd->users++;
	cq->users++;
	*resp = (struct rocemu_create_wq_resp){
		.wqn = wq->wqn, .wqe_cnt = wq->wqe_cnt, .wqe_shift = wq->wqe_shift,
		.max_wr = wq->max_wr, .max_sge = wq->max_sge, .size = size,
		.dbrec_offset = wq->dbrec_offset,
	};
	*fd = ring_fd;
	rocemu_log(ROCEMU_LOG_DEBUG, "%s wq 0x%06x create pd %u cq 0x%06x %u x %u", c->dev->name,
		   wq->wqn, pd->pdn, cq->cqn, wq->max_wr, wq->max_sge);
	return 0;

fail_charge:
	rocemu_uncharge(&wq->charge);
fail:
	free(wq);
	return err;
}

struct rocemu_wq *rocemu_wq_lookup(struct rocemu_client *c, uint32_t wqn)
{
	return rocemu_obj_lookup(c->emu, &rocemu_wq_kind, c, wqn);
}

struct rocemu_rq_ring rocemu_wq_rq_ring(const struct rocemu_wq *wq)
{
	return (struct rocemu_rq_ring){
		.buf = wq->ring.addr,
		.dbrec = (const uint8_t *)wq->ring.addr + wq->dbrec_offset,
		.wqe_cnt = wq->wqe_cnt,
		.wqe_shift = wq->wqe_shift,
		.num = wq->wqn,
		.wq = true,
	};
}

static void wq_enter_state(struct rocemu_wq *wq, enum ibv_wq_state to, const char *why)
{
	if (to != wq->state)
		rocemu_log(to == IBV_WQS_ERR ? ROCEMU_LOG_INFO : ROCEMU_LOG_DEBUG,
			   "%s wq 0x%06x %s -> %s: %s", wq->owner->dev->name, wq->wqn,
			   state_names[wq->state], state_names[to], why);
	wq->state = to;
}

static void wq_complete_error(struct rocemu_wq *wq, uint32_t counter, enum ibv_wc_status status)
{
	const struct rocemu_cqe_info info = {
		.kind = ROCEMU_CQE_RECV_ERR, .status = status, .qpn = wq->wqn,
		.wqe_counter = (uint16_t)counter, .wq = true,
	};

	wq->owner->dev->format->cqe_write(wq->cq, &info);
}

/* Every WQE posted and not taken completes with WR_FLUSH_ERR (a doorbell past the ring: none). */
static void wq_flush(struct rocemu_wq *wq)
{
	struct rocemu_rq_ring rq = rocemu_wq_rq_ring(wq);
	int posted;

	for (posted = wq->owner->dev->format->rq_posted(&rq, wq->consumed); posted > 0;
	     posted--, wq->consumed++)
		wq_complete_error(wq, wq->consumed, IBV_WC_WR_FLUSH_ERR);
}

void rocemu_wq_recv_fail(struct rocemu_wq *wq, uint32_t counter, enum ibv_wc_status status)
{
	wq_complete_error(wq, counter, status);
	if (status == IBV_WC_WR_FLUSH_ERR || wq->state == IBV_WQS_ERR)
		return;
	wq_enter_state(wq, IBV_WQS_ERR, "an error completion");
	wq_flush(wq);
}

/* The RQ state machine: to RESET from anywhere, RESET to RDY, RDY to ERR, or staying. */
static bool transition_ok(enum ibv_wq_state from, enum ibv_wq_state to)
{
	return from == to || to == IBV_WQS_RESET || (from == IBV_WQS_RESET && to == IBV_WQS_RDY) ||
	       (from == IBV_WQS_RDY && to == IBV_WQS_ERR);
}

int rocemu_wq_modify(struct rocemu_client *c, const struct rocemu_modify_wq_req *req)
{
	struct rocemu_wq *wq = rocemu_wq_lookup(c, req->wqn);
	enum ibv_wq_state to;

	if (!wq || (req->attr_mask & ~(uint32_t)WQ_ATTRS))
		return -EINVAL;
	if ((req->attr_mask & IBV_WQ_ATTR_CURR_STATE) && req->curr_wq_state != wq->state)
		return -EINVAL;
	to = req->attr_mask & IBV_WQ_ATTR_STATE ? (enum ibv_wq_state)req->wq_state : wq->state;
	if (to > IBV_WQS_ERR || !transition_ok(wq->state, to))
		return -EINVAL;
	if ((req->attr_mask & IBV_WQ_ATTR_FLAGS) && (req->flags_mask & ~(uint32_t)WQ_FLAGS))
		return -EOPNOTSUPP;
	if (req->attr_mask & IBV_WQ_ATTR_FLAGS)
		wq->flags = (wq->flags & ~req->flags_mask) | (req->flags & req->flags_mask);
	/* RESET empties the ring: the shim posts from its start again. */
	if (to == IBV_WQS_RESET)
		wq->consumed = 0;
	wq_enter_state(wq, to, "ibv_modify_wq");
	if (to == IBV_WQS_ERR)
		wq_flush(wq);
	return 0;
}

static void wq_free(struct rocemu_emu *emu, struct rocemu_wq *wq)
{
	rocemu_log(ROCEMU_LOG_DEBUG, "%s wq 0x%06x destroy", wq->owner->dev->name, wq->wqn);
	rocemu_obj_remove(emu, &rocemu_wq_kind, wq);
	wq->pd->users--;
	wq->cq->users--;
	rocemu_uncharge(&wq->charge);
	rocemu_shm_destroy(&wq->ring);
	free(wq);
}

int rocemu_wq_destroy(struct rocemu_client *c, uint32_t wqn)
{
	struct rocemu_wq *wq = rocemu_wq_lookup(c, wqn);

	if (!wq)
		return -EINVAL;
	if (wq->tables)
		return -EBUSY;
	wq_free(c->emu, wq);
	return 0;
}

ROCEMU_OBJ_KIND(rocemu_wq_kind, struct rocemu_wq, struct rocemu_client, wqs, wqs, owner, wqn,
		node, wq_free, .first = 1, .max = ROCEMU_MAX_QP * ROCEMU_MAX_DEVICES);
