/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/cqev/cq_event.h"

#include <endian.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "emulator/core/client.h"
#include "emulator/obj/async_event.h"
#include "emulator/obj/comp_channel.h"
#include "emulator/obj/cq.h"
#include "emulator/observe/trace.h"
#include "emulator/ring/format.h"
#include "rocemu/log.h"
#include "rocemu/ring.h"

uint32_t rocemu_cq_dbrec_read(const struct rocemu_cq *cq, int word)
{
	const __be32 *dbrec = (const __be32 *)((const uint8_t *)cq->ring.addr +
					       cq->layout.dbrec_offset);

	return be32toh(__atomic_load_n(&dbrec[word], __ATOMIC_ACQUIRE));
}

bool rocemu_cq_room(struct rocemu_cq *cq, uint32_t ci, uint32_t qpn)
{
	if (!cq->overruns && ((cq->pi - ci) & ROCEMU_CQ_INDEX_MASK) < cq->layout.ncqe)
		return true;
	if (!cq->overruns++) {
		rocemu_log(ROCEMU_LOG_WARN, "%s cq 0x%06x overrun: pi %u ci %u qp 0x%06x, CQ in error",
			   cq->owner->dev->name, cq->cqn, cq->pi, ci, qpn);
		rocemu_async_event(cq->owner, cq->user_cq, IBV_EVENT_CQ_ERR);
	}
	return false;
}

/*
 * Write the 8-byte user_cq into the channel, as uverbs does per event; it
 * reports every CQE written so far, unpolled ones included.
 */
static void cq_fire(struct rocemu_cq *cq, struct rocemu_cq_arm arm)
{
	cq->fired_sn = arm.sn;
	cq->notified = cq->pi;
	if (!cq->channel)
		return;
	if (write(cq->channel->event_fd, &cq->user_cq, sizeof(cq->user_cq)) !=
	    sizeof(cq->user_cq))
		rocemu_log(ROCEMU_LOG_WARN, "%s cq 0x%06x: completion event dropped (%s)",
			   cq->owner->dev->name, cq->cqn, strerror(errno));
	else
		rocemu_log(ROCEMU_LOG_DEBUG, "%s cq 0x%06x event", cq->owner->dev->name, cq->cqn);
}

static bool cq_armed(const struct rocemu_cq *cq, struct rocemu_cq_arm arm)
{
	return arm.armed && arm.sn != cq->fired_sn;
}

/*
 * An arm that finds CQEs owes an event at once only for CQEs no event has
 * reported yet, as a ConnectX decides it from its CQ context
 * (last_notified_index, last_solicit_index): some at or past the arm's
 * consumer index, written since the last event (for a solicited arm, one
 * of them solicited or an error). The CQ that raised an event and is
 * armed again before it is polled (ibv_get_cq_event(3)'s loop, librpma's
 * rpma_cq_wait) raises none until its next CQE; NAPI-like pollers that
 * arm after their last poll still hear of the CQEs that came in between.
 */
static bool cq_owes_event(const struct rocemu_cq *cq, struct rocemu_cq_arm arm)
{
	uint32_t unpolled = (cq->pi - arm.ci) & ROCEMU_CQ_INDEX_MASK;
	uint32_t unreported = cq->pi - cq->notified;
	uint32_t fresh = unpolled < unreported ? unpolled : unreported;

	if (arm.all)
		return fresh > 0;
	return cq->pi - cq->solicited < fresh;
}

void rocemu_cq_event_arm_check(struct rocemu_cq *cq, struct rocemu_cq_arm arm)
{
	if (cq_armed(cq, arm) && cq_owes_event(cq, arm))
		cq_fire(cq, arm);
}

/*
 * Further than ncqe back, the marks tell nothing an arm could use (no more
 * CQEs are unpolled), and a free-running distance must never wrap.
 */
static void cq_marks_bound(struct rocemu_cq *cq)
{
	uint32_t ncqe = cq->layout.ncqe;

	if (cq->pi - cq->notified > ncqe)
		cq->notified = cq->pi - ncqe;
	if (cq->pi - cq->solicited > ncqe)
		cq->solicited = cq->pi - ncqe;
}

void rocemu_cq_written(struct rocemu_cq *cq, const struct rocemu_cqe_info *info, uint8_t op,
		       uint8_t syndrome, struct rocemu_cq_arm (*arm_of)(const struct rocemu_cq *cq))
{
	bool solicited = info->solicited || rocemu_cqe_kind_error(info->kind);
	struct rocemu_cq_arm arm;

	cq->pi++;
	if (solicited)
		cq->solicited = cq->pi;
	cq_marks_bound(cq);
	/* Traced once written: an overrun's lost CQE is not one. */
	if (rocemu_tracing(cq->owner->emu))
		rocemu_trace_cqe(cq, info, syndrome);
	rocemu_log(ROCEMU_LOG_DEBUG, "%s qp 0x%06x cq 0x%06x cqe op %u wqe %u bytes %u syndrome 0x%02x",
		   cq->owner->dev->name, info->qpn, cq->cqn, op, info->wqe_counter,
		   info->byte_cnt, syndrome);
	/* The arm word as it stands now: an arm the shim made meanwhile counts. */
	arm = arm_of(cq);
	if (cq_armed(cq, arm) && (arm.all || solicited))
		cq_fire(cq, arm);
}
