/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The QP state machine table (IBTA Vol. 1 10.3.1 and 11.2.5.1; the Linux
 * core verbs qp_state_table is the model). One row per (cur, next) pair:
 * legal or not, and the required / optional ibv_modify_qp masks per
 * transport type. Types the emulator does not model are never legal.
 */
#include "emulator/obj/qp_state.h"

#include <errno.h>

#include "rocemu/ring.h"

#define QP_STATE_COUNT (IBV_QPS_ERR + 1)

enum qp_type_slot {
	SLOT_RC, SLOT_UC, SLOT_UD, SLOT_XRC_INI, SLOT_XRC_TGT, SLOT_DCI, SLOT_DCT, SLOT_RAW,
	SLOT_COUNT
};

struct qp_transition {
	bool valid;
	int req[SLOT_COUNT];
	int opt[SLOT_COUNT];
};

#define ANY_TO_RESET_AND_ERR \
	[IBV_QPS_RESET] = { .valid = true }, \
	[IBV_QPS_ERR] = { .valid = true }

static const struct qp_transition qp_table[QP_STATE_COUNT][QP_STATE_COUNT] = {
	[IBV_QPS_RESET] = {
		/* Not RESET -> ERR: a QP never set up has nothing to flush (as Linux). */
		[IBV_QPS_RESET] = { .valid = true },
		[IBV_QPS_INIT] = {
			.valid = true,
			.req = {
				[SLOT_RC] = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
				[SLOT_UC] = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
				[SLOT_UD] = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY,
				[SLOT_XRC_INI] = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
				[SLOT_XRC_TGT] = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
				[SLOT_DCI] = IBV_QP_PKEY_INDEX | IBV_QP_PORT,
				[SLOT_DCT] = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
				[SLOT_RAW] = IBV_QP_PORT,
			},
			.opt = {
				[SLOT_DCI] = IBV_QP_ACCESS_FLAGS,
			},
		},
	},
	[IBV_QPS_INIT] = {
		ANY_TO_RESET_AND_ERR,
		[IBV_QPS_INIT] = {
			.valid = true,
			.opt = {
				[SLOT_RC] = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
				[SLOT_UC] = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
				[SLOT_UD] = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY,
				[SLOT_XRC_INI] = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
				[SLOT_XRC_TGT] = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
				[SLOT_DCI] = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
				[SLOT_DCT] = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
				[SLOT_RAW] = IBV_QP_PORT,
			},
		},
		[IBV_QPS_RTR] = {
			.valid = true,
			.req = {
				[SLOT_RC] = IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
					    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
					    IBV_QP_MIN_RNR_TIMER,
				[SLOT_UC] = IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
					    IBV_QP_RQ_PSN,
				[SLOT_XRC_INI] = IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
						 IBV_QP_RQ_PSN,
				[SLOT_XRC_TGT] = IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
						 IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
						 IBV_QP_MIN_RNR_TIMER,
				/* A DC QP has no one peer: no DEST_QPN, PSNs or depths to name. */
				[SLOT_DCI] = IBV_QP_PATH_MTU,
				[SLOT_DCT] = IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_MIN_RNR_TIMER,
			},
			.opt = {
				[SLOT_RC] = IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX,
				[SLOT_UC] = IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX,
				[SLOT_UD] = IBV_QP_PKEY_INDEX | IBV_QP_QKEY,
				[SLOT_XRC_INI] = IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX,
				[SLOT_XRC_TGT] = IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX,
				[SLOT_DCI] = IBV_QP_AV | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX,
			},
		},
	},
	[IBV_QPS_RTR] = {
		ANY_TO_RESET_AND_ERR,
		[IBV_QPS_RTS] = {
			.valid = true,
			.req = {
				[SLOT_RC] = IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					    IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC,
				[SLOT_UC] = IBV_QP_SQ_PSN,
				[SLOT_UD] = IBV_QP_SQ_PSN,
				[SLOT_XRC_INI] = IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
						 IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC,
				[SLOT_XRC_TGT] = IBV_QP_TIMEOUT | IBV_QP_SQ_PSN,
			},
			.opt = {
				[SLOT_RC] = IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
					    IBV_QP_MIN_RNR_TIMER | IBV_QP_PATH_MIG_STATE,
				[SLOT_UC] = IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
					    IBV_QP_PATH_MIG_STATE,
				[SLOT_UD] = IBV_QP_CUR_STATE | IBV_QP_QKEY,
				[SLOT_XRC_INI] = IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
						 IBV_QP_PATH_MIG_STATE,
				[SLOT_XRC_TGT] = IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
						 IBV_QP_MIN_RNR_TIMER | IBV_QP_PATH_MIG_STATE,
			},
		},
	},
	[IBV_QPS_RTS] = {
		ANY_TO_RESET_AND_ERR,
		[IBV_QPS_RTS] = {
			.valid = true,
			.opt = {
				[SLOT_RC] = IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH |
					    IBV_QP_PATH_MIG_STATE | IBV_QP_MIN_RNR_TIMER,
				[SLOT_UC] = IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH |
					    IBV_QP_PATH_MIG_STATE,
				[SLOT_UD] = IBV_QP_CUR_STATE | IBV_QP_QKEY,
				[SLOT_XRC_INI] = IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
						 IBV_QP_PATH_MIG_STATE,
				[SLOT_XRC_TGT] = IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
						 IBV_QP_MIN_RNR_TIMER | IBV_QP_PATH_MIG_STATE,
			},
		},
		[IBV_QPS_SQD] = {
			.valid = true,
			.opt = {
				[SLOT_RC] = IBV_QP_EN_SQD_ASYNC_NOTIFY,
				[SLOT_UC] = IBV_QP_EN_SQD_ASYNC_NOTIFY,
				[SLOT_UD] = IBV_QP_EN_SQD_ASYNC_NOTIFY,
				[SLOT_XRC_INI] = IBV_QP_EN_SQD_ASYNC_NOTIFY,
				[SLOT_XRC_TGT] = IBV_QP_EN_SQD_ASYNC_NOTIFY,
			},
		},
	},
	[IBV_QPS_SQD] = {
		ANY_TO_RESET_AND_ERR,
		[IBV_QPS_RTS] = {
			.valid = true,
			.opt = {
				[SLOT_RC] = IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
					    IBV_QP_MIN_RNR_TIMER | IBV_QP_PATH_MIG_STATE,
				[SLOT_UC] = IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
					    IBV_QP_PATH_MIG_STATE,
				[SLOT_UD] = IBV_QP_CUR_STATE | IBV_QP_QKEY,
				[SLOT_XRC_INI] = IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
						 IBV_QP_PATH_MIG_STATE,
				[SLOT_XRC_TGT] = IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
						 IBV_QP_MIN_RNR_TIMER | IBV_QP_PATH_MIG_STATE,
			},
		},
		[IBV_QPS_SQD] = {
			.valid = true,
			.opt = {
				[SLOT_RC] = IBV_QP_PORT | IBV_QP_AV | IBV_QP_TIMEOUT |
					    IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					    IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MAX_DEST_RD_ATOMIC |
					    IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
					    IBV_QP_PKEY_INDEX | IBV_QP_MIN_RNR_TIMER |
					    IBV_QP_PATH_MIG_STATE,
				[SLOT_UC] = IBV_QP_AV | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
					    IBV_QP_PKEY_INDEX | IBV_QP_PATH_MIG_STATE,
				[SLOT_UD] = IBV_QP_PKEY_INDEX | IBV_QP_QKEY,
				[SLOT_XRC_INI] = IBV_QP_PORT | IBV_QP_AV | IBV_QP_TIMEOUT |
						 IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
						 IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_ALT_PATH |
						 IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX |
						 IBV_QP_PATH_MIG_STATE,
				[SLOT_XRC_TGT] = IBV_QP_PORT | IBV_QP_AV | IBV_QP_TIMEOUT |
						 IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_ALT_PATH |
						 IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX |
						 IBV_QP_MIN_RNR_TIMER | IBV_QP_PATH_MIG_STATE,
			},
		},
	},
	[IBV_QPS_SQE] = {
		ANY_TO_RESET_AND_ERR,
		/* An RC or XRC QP never enters SQE (IBTA 10.3.1.6): no masks for it. */
		[IBV_QPS_RTS] = {
			.valid = true,
			.opt = {
				[SLOT_UC] = IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS,
				[SLOT_UD] = IBV_QP_CUR_STATE | IBV_QP_QKEY,
			},
		},
	},
	[IBV_QPS_ERR] = {
		ANY_TO_RESET_AND_ERR,
	},
};

static const char *const qp_state_names[QP_STATE_COUNT] = {
	[IBV_QPS_RESET] = "RESET", [IBV_QPS_INIT] = "INIT", [IBV_QPS_RTR] = "RTR",
	[IBV_QPS_RTS] = "RTS", [IBV_QPS_SQD] = "SQD", [IBV_QPS_SQE] = "SQE",
	[IBV_QPS_ERR] = "ERR",
};

const char *rocemu_qp_state_name(enum ibv_qp_state state)
{
	return (unsigned)state < QP_STATE_COUNT ? qp_state_names[state] : "?";
}

static int qp_type_slot(enum ibv_qp_type type)
{
	switch ((unsigned int)type) {	/* DC types are not in the enum */
	case IBV_QPT_RC:
		return SLOT_RC;
	case IBV_QPT_UC:
		return SLOT_UC;
	case IBV_QPT_UD:
		return SLOT_UD;
	case IBV_QPT_XRC_SEND:
		return SLOT_XRC_INI;
	case IBV_QPT_XRC_RECV:
		return SLOT_XRC_TGT;
	case ROCEMU_QPT_DCI:
		return SLOT_DCI;
	case ROCEMU_QPT_DCT:
		return SLOT_DCT;
	case IBV_QPT_RAW_PACKET:
		return SLOT_RAW;
	default:
		return -1;
	}
}

/*
 * What uverbs drops from an XRC QP's modify mask before the table sees it
 * (modify_qp_mask): an initiator has no responder, a target no requester.
 */
static const int qp_mask_ignored[SLOT_COUNT] = {
	[SLOT_XRC_INI] = IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
	[SLOT_XRC_TGT] = IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY,
};

int rocemu_qp_modify_mask(enum ibv_qp_type type, int mask)
{
	int slot = qp_type_slot(type);

	return slot < 0 ? mask : mask & ~qp_mask_ignored[slot];
}

/* The table entry for a legal transition of a modelled type, else NULL. */
static const struct qp_transition *qp_transition(enum ibv_qp_type type, enum ibv_qp_state cur,
						 enum ibv_qp_state next, int *slot)
{
	const struct qp_transition *t;

	*slot = qp_type_slot(type);
	if (*slot < 0 || (unsigned)cur >= QP_STATE_COUNT || (unsigned)next >= QP_STATE_COUNT)
		return NULL;
	/* A DCT goes no further than RTR (mlx5_ib_modify_dct). */
	if (*slot == SLOT_DCT && (cur > IBV_QPS_RTR || next > IBV_QPS_RTR) &&
	    next != IBV_QPS_ERR && cur != IBV_QPS_ERR)
		return NULL;
	/* A RAW_PACKET QP has no SQD or SQE (mlx5's modify_raw_packet_qp). */
	if (*slot == SLOT_RAW && (cur == IBV_QPS_SQD || cur == IBV_QPS_SQE ||
				  next == IBV_QPS_SQD || next == IBV_QPS_SQE))
		return NULL;
	/* Once it has a path, a DCI is modified as an RC QP. */
	if (*slot == SLOT_DCI && cur != IBV_QPS_RESET && cur != IBV_QPS_INIT)
		*slot = SLOT_RC;
	t = &qp_table[cur][next];
	return t->valid ? t : NULL;
}

bool rocemu_qp_transition_valid(enum ibv_qp_type type, enum ibv_qp_state cur,
				enum ibv_qp_state next)
{
	int slot;

	return qp_transition(type, cur, next, &slot) != NULL;
}

int rocemu_qp_transition_required(enum ibv_qp_type type, enum ibv_qp_state cur,
				  enum ibv_qp_state next)
{
	const struct qp_transition *t;
	int slot;

	t = qp_transition(type, cur, next, &slot);
	return t ? t->req[slot] : 0;
}

int rocemu_qp_transition_optional(enum ibv_qp_type type, enum ibv_qp_state cur,
				  enum ibv_qp_state next)
{
	const struct qp_transition *t;
	int slot;

	t = qp_transition(type, cur, next, &slot);
	return t ? t->opt[slot] : 0;
}

int rocemu_qp_modify_mask_check(enum ibv_qp_type type, enum ibv_qp_state cur,
				enum ibv_qp_state next, int mask)
{
	const struct qp_transition *t;
	int slot;

	/* The current state may only be asserted where it can drift (IBTA 11.2.5.1). */
	if ((mask & IBV_QP_CUR_STATE) && cur != IBV_QPS_RTR && cur != IBV_QPS_RTS &&
	    cur != IBV_QPS_SQD && cur != IBV_QPS_SQE)
		return -EINVAL;
	t = qp_transition(type, cur, next, &slot);
	if (!t)
		return -EINVAL;
	if ((mask & t->req[slot]) != t->req[slot])
		return -EINVAL;
	if (mask & ~(t->req[slot] | t->opt[slot] | IBV_QP_STATE))
		return -EINVAL;
	return 0;
}
