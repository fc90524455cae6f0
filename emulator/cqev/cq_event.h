/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * A CQ's completion events and overrun, whatever its ring format: every
 * format's CQE writer calls these around each CQE it writes, and its arm
 * check with the arm word it decoded. Events go into the completion
 * channel's pipe, one per arm, for a CQE no event reported before, as a
 * ConnectX decides it from its CQ context.
 */
#ifndef ROCEMU_EMULATOR_CQEV_CQ_EVENT_H
#define ROCEMU_EMULATOR_CQEV_CQ_EVENT_H

#include <stdbool.h>
#include <stdint.h>

struct rocemu_cq;
struct rocemu_cqe_info;

/* An arm word as its format reads it. */
struct rocemu_cq_arm {
	uint8_t sn;			/* the arm sequence: a new one is a new arm */
	bool armed;			/* a command at all */
	bool all;			/* every CQE, not only solicited and error ones */
	uint32_t ci;			/* the consumer index when it armed */
};

/*
 * Word word of cq's doorbell record (consumer index 0, arm word 1 in both
 * formats), read with acquire: the shim consumed the CQEs before it.
 */
uint32_t rocemu_cq_dbrec_read(const struct rocemu_cq *cq, int word);

/*
 * Room for a CQE of QP qpn with the consumer at ci: false when the CQ is
 * full or in error already. An overrun puts it in error for good (CQ_ERR
 * once, then no CQE), as on a ConnectX.
 */
bool rocemu_cq_room(struct rocemu_cq *cq, uint32_t ci, uint32_t qpn);

/*
 * The CQE of info (its format's opcode op, an error's syndrome) at the
 * producer index is written and handed over: move past it, trace and log
 * it, and raise the event an armed CQ owes for it (arm_of decodes the
 * format's arm word).
 */
void rocemu_cq_written(struct rocemu_cq *cq, const struct rocemu_cqe_info *info, uint8_t op,
		       uint8_t syndrome, struct rocemu_cq_arm (*arm_of)(const struct rocemu_cq *cq));

/*
 * The shim armed cq (or it may have): fire now if CQEs at or past the
 * arm's consumer index were written since the last event (for a solicited
 * arm, a solicited or error one among them).
 */
void rocemu_cq_event_arm_check(struct rocemu_cq *cq, struct rocemu_cq_arm arm);

#endif /* ROCEMU_EMULATOR_CQEV_CQ_EVENT_H */
