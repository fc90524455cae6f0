/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The QP state machine as data: for each (current, next) state and QP
 * type, whether the transition is legal and which ibv_modify_qp attribute
 * masks it requires and allows (IBTA Vol. 1 ch. 10.3 and ch. 11, as the
 * kernel's core verbs table encodes them).
 */
#ifndef ROCEMU_EMULATOR_QP_STATE_H
#define ROCEMU_EMULATOR_QP_STATE_H

#include <stdbool.h>
#include <infiniband/verbs.h>

/* "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR" ("?" otherwise). */
const char *rocemu_qp_state_name(enum ibv_qp_state state);

/* Is cur -> next legal for a QP of this type at all? */
bool rocemu_qp_transition_valid(enum ibv_qp_type type, enum ibv_qp_state cur,
				enum ibv_qp_state next);

/* Masks a legal transition requires / allows besides IBV_QP_STATE (0 if illegal). */
int rocemu_qp_transition_required(enum ibv_qp_type type, enum ibv_qp_state cur,
				  enum ibv_qp_state next);
int rocemu_qp_transition_optional(enum ibv_qp_type type, enum ibv_qp_state cur,
				  enum ibv_qp_state next);

/* The mask uverbs passes on for a QP of this type: XRC's drop the other side's attributes. */
int rocemu_qp_modify_mask(enum ibv_qp_type type, int mask);

/*
 * Is ibv_modify_qp(mask) from cur legal as to states and masks? next is
 * attr->qp_state when mask has IBV_QP_STATE, else cur. IBV_QP_CUR_STATE
 * is accepted only from RTR, RTS, SQD and SQE (the kernel allows it from
 * RTR -> RTS too). Returns 0 or -EINVAL.
 * Attribute values are checked elsewhere.
 */
int rocemu_qp_modify_mask_check(enum ibv_qp_type type, enum ibv_qp_state cur,
				enum ibv_qp_state next, int mask);

#endif /* ROCEMU_EMULATOR_QP_STATE_H */
