/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/obj/cq.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "emulator/obj/comp_channel.h"
#include "emulator/ring/format.h"
#include "rocemu/log.h"
#include "rocemu/ring.h"

#define CQ_DBREC_BYTES 64	/* two big-endian words, on their own cache line */

/* The layout of a ring for cqe entries of cqe_size bytes. */
static void cq_layout(uint32_t cqn, uint32_t cqe, uint32_t cqe_size,
		      struct rocemu_cq_layout *layout)
{
	uint32_t ncqe = rocemu_cq_size(cqe);

	layout->cqn = cqn;
	layout->ncqe = ncqe;
	layout->cqe_size = cqe_size;
	layout->buf_offset = 0;
	layout->dbrec_offset = (uint64_t)ncqe * cqe_size;
	layout->size = rocemu_page_align(layout->dbrec_offset + CQ_DBREC_BYTES);
}

static int cq_size_check(uint32_t cqe)
{
	return cqe < 1 || cqe > ROCEMU_MAX_CQE ? -EINVAL : 0;
}

int rocemu_cq_create(struct rocemu_client *c, const struct rocemu_create_cq_req *req,
		     struct rocemu_cq_layout *layout, int *fd)
{
	struct rocemu_channel *ch = NULL;
	struct rocemu_cq *cq;
	int err, ring_fd;

	const struct rocemu_ring_format *format = c->dev->format;
	uint32_t cqe_size = req->cqe_size ? req->cqe_size : format->cqe_size_default;

	err = cq_size_check(req->cqe);
	if (err)
		return err;
	if (!format->cqe_size_valid(cqe_size))
		return -EINVAL;
	if (req->channel != ROCEMU_NO_HANDLE) {
		ch = rocemu_channel_lookup(c, req->channel);
		if (!ch)
			return -EINVAL;
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return -ENOMEM;
	cq_layout(0, req->cqe, cqe_size, &cq->layout);
	err = rocemu_charge(c, &cq->charge, ROCEMU_RES_CQ, rocemu_ring_amount(cq->layout.size));
	if (err)
		goto fail;
	err = rocemu_obj_add(c->emu, &rocemu_cq_kind, c, cq);
	if (err)
		goto fail_charge;
	cq->layout.cqn = cq->cqn;
	ring_fd = rocemu_shm_create("rocemu-cq", cq->layout.size, &cq->ring);
	if (ring_fd < 0) {
		err = ring_fd;
		rocemu_obj_remove(c->emu, &rocemu_cq_kind, cq);
		goto fail_charge;
	}
	cq->untouched = format->cq_ring_start(cq->ring.addr, cqe_size, cq->layout.ncqe, 0, 0);
	cq->channel = ch;
	cq->comp_vector = req->comp_vector;
	cq->user_cq = req->user_cq;
	if (ch)
		ch->users++;
	*layout = cq->layout;
	*fd = ring_fd;
	rocemu_log(ROCEMU_LOG_DEBUG, "%s cq 0x%06x create cqe %u", c->dev->name, cq->cqn,
		   cq->layout.ncqe - 1);
	return 0;

fail_charge:
	rocemu_uncharge(&cq->charge);
fail:
	free(cq);
	return err;
}

struct rocemu_cq *rocemu_cq_lookup(struct rocemu_client *c, uint32_t cqn)
{
	return rocemu_obj_lookup(c->emu, &rocemu_cq_kind, c, cqn);
}

int rocemu_cq_resize(struct rocemu_client *c, const struct rocemu_resize_cq_req *req,
		     struct rocemu_cq_layout *layout, int *fd)
{
	struct rocemu_cq *cq = rocemu_cq_lookup(c, req->cqn);
	struct rocemu_amount old_amount;
	struct rocemu_cq_layout new_layout;
	struct rocemu_shm new_ring;
	int err, ring_fd, untouched;

	if (!cq)
		return -EINVAL;
	err = cq_size_check(req->cqe);
	if (err)
		return err;
	cq_layout(cq->cqn, req->cqe, cq->layout.cqe_size, &new_layout);
	/* Both rings are held until the move, as the kernel pins both buffers of a resize. */
	old_amount = cq->charge.amt;
	err = rocemu_charge_change(&cq->charge, rocemu_ring_amount(cq->layout.size +
								   new_layout.size));
	if (err)
		return err;
	ring_fd = rocemu_shm_create("rocemu-cq", new_layout.size, &new_ring);
	if (ring_fd < 0) {
		err = ring_fd;
		goto fail;
	}
	untouched = cq->owner->dev->format->cq_ring_move(cq, new_ring.addr, new_layout.ncqe,
					 (uint8_t *)new_ring.addr + new_layout.dbrec_offset);
	if (untouched < 0) {
		err = untouched;
		close(ring_fd);
		rocemu_shm_destroy(&new_ring);
		goto fail;
	}
	rocemu_shm_destroy(&cq->ring);
	rocemu_charge_change(&cq->charge, rocemu_ring_amount(new_layout.size));
	cq->ring = new_ring;
	cq->layout = new_layout;
	cq->untouched = (uint32_t)untouched;
	*layout = new_layout;
	*fd = ring_fd;
	rocemu_log(ROCEMU_LOG_DEBUG, "%s cq 0x%06x resize cqe %u", c->dev->name, cq->cqn,
		   new_layout.ncqe - 1);
	return 0;

fail:
	rocemu_charge_change(&cq->charge, old_amount);
	return err;
}

static void cq_free(struct rocemu_emu *emu, struct rocemu_cq *cq)
{
	rocemu_log(ROCEMU_LOG_DEBUG, "%s cq 0x%06x destroy", cq->owner->dev->name, cq->cqn);
	rocemu_client_unwatch_direct(cq->owner, &cq->direct);
	rocemu_obj_remove(emu, &rocemu_cq_kind, cq);
	if (cq->channel)
		cq->channel->users--;
	rocemu_uncharge(&cq->charge);
	rocemu_shm_destroy(&cq->ring);
	free(cq);
}

int rocemu_cq_destroy(struct rocemu_client *c, uint32_t cqn)
{
	struct rocemu_cq *cq = rocemu_cq_lookup(c, cqn);

	if (!cq)
		return -EINVAL;
	if (cq->users)
		return -EBUSY;
	cq_free(c->emu, cq);
	return 0;
}

ROCEMU_OBJ_KIND(rocemu_cq_kind, struct rocemu_cq, struct rocemu_client, cqs, cqs, owner, cqn, node,
		cq_free, .first = 1, .max = ROCEMU_MAX_CQ * ROCEMU_MAX_DEVICES);
