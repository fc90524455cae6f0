/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The QP state machine table against IBTA Vol. 1 ch. 10.3 / 11.2.4 as the
 * kernel's core verbs qp_state_table encodes it: which transitions exist,
 * which attributes each requires, and the mask check built on them.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>

#include "emulator/obj/qp_state.h"

#define NSTATES 7	/* RESET .. ERR */

/* Short names keep the tables one row per case. */
#define RST IBV_QPS_RESET
#define INI IBV_QPS_INIT
#define RTR IBV_QPS_RTR
#define RTS IBV_QPS_RTS
#define SQD IBV_QPS_SQD
#define SQE IBV_QPS_SQE
#define ERR IBV_QPS_ERR

/* legal[cur][next]; a row is the current state. SQE -> RTS exists in the table for every type. */
static const bool legal[NSTATES][NSTATES] = {
	/*          RST    INI    RTR    RTS    SQD    SQE    ERR */
	[RST] = { true,  true,  false, false, false, false, false },
	[INI] = { true,  true,  true,  false, false, false, true  },
	[RTR] = { true,  false, false, true,  false, false, true  },
	[RTS] = { true,  false, false, true,  true,  false, true  },
	[SQD] = { true,  false, false, true,  true,  false, true  },
	[SQE] = { true,  false, false, true,  false, false, true  },
	[ERR] = { true,  false, false, false, false, false, true  },
};

#define RC_INIT_REQ (IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)
#define RC_RTR_REQ (IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | \
		    IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)
#define RC_RTS_REQ (IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | \
		    IBV_QP_MAX_QP_RD_ATOMIC)

static const struct required_case {
	enum ibv_qp_type type;
	enum ibv_qp_state cur, next;
	int mask;
} required_cases[] = {
	{ IBV_QPT_RC, RST, INI, RC_INIT_REQ },
	{ IBV_QPT_RC, INI, RTR, RC_RTR_REQ },
	{ IBV_QPT_RC, RTR, RTS, RC_RTS_REQ },
	{ IBV_QPT_UC, RST, INI, IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS },
	{ IBV_QPT_UC, INI, RTR, IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN },
	{ IBV_QPT_UC, RTR, RTS, IBV_QP_SQ_PSN },
	{ IBV_QPT_UD, RST, INI, IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY },
	{ IBV_QPT_UD, INI, RTR, 0 },
	{ IBV_QPT_UD, RTR, RTS, IBV_QP_SQ_PSN },
	{ IBV_QPT_XRC_SEND, RST, INI, RC_INIT_REQ },
	{ IBV_QPT_XRC_SEND, INI, RTR, IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN },
	{ IBV_QPT_XRC_SEND, RTR, RTS, RC_RTS_REQ },
	{ IBV_QPT_XRC_RECV, RST, INI, RC_INIT_REQ },
	{ IBV_QPT_XRC_RECV, INI, RTR, RC_RTR_REQ },
	{ IBV_QPT_XRC_RECV, RTR, RTS, IBV_QP_TIMEOUT | IBV_QP_SQ_PSN },
};

/* Attributes each RC transition must allow (a subset of the table's optional mask). */
static const struct required_case rc_optional_cases[] = {
	{ IBV_QPT_RC, INI, INI, IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS },
	{ IBV_QPT_RC, INI, RTR, IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX },
	{ IBV_QPT_RC, RTR, RTS, IBV_QP_ACCESS_FLAGS | IBV_QP_MIN_RNR_TIMER },
	{ IBV_QPT_RC, RTS, RTS, IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_MIN_RNR_TIMER },
	{ IBV_QPT_RC, RTS, SQD, IBV_QP_EN_SQD_ASYNC_NOTIFY },
	{ IBV_QPT_RC, SQD, RTS, IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_MIN_RNR_TIMER },
	{ IBV_QPT_RC, SQD, SQD, IBV_QP_PORT | IBV_QP_AV | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			       IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC |
			       IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_ACCESS_FLAGS |
			       IBV_QP_PKEY_INDEX | IBV_QP_MIN_RNR_TIMER },
};

#define N_ELEMS(a) ((int)(sizeof(a) / sizeof((a)[0])))

static int rc_required(enum ibv_qp_state cur, enum ibv_qp_state next)
{
	int i;

	for (i = 0; i < N_ELEMS(required_cases); i++)
		if (required_cases[i].type == IBV_QPT_RC && required_cases[i].cur == cur &&
		    required_cases[i].next == next)
			return required_cases[i].mask;
	return 0;
}

/* Loop index _i = cur * 7 + next. */
START_TEST(test_rc_legality_table)
{
	enum ibv_qp_state cur = _i / NSTATES, next = _i % NSTATES;

	ck_assert_msg(rocemu_qp_transition_valid(IBV_QPT_RC, cur, next) == legal[cur][next],
		      "RC %s -> %s should be %s", rocemu_qp_state_name(cur),
		      rocemu_qp_state_name(next), legal[cur][next] ? "legal" : "illegal");
}
END_TEST

START_TEST(test_rc_required_masks)
{
	enum ibv_qp_state cur = _i / NSTATES, next = _i % NSTATES;

	ck_assert_msg(rocemu_qp_transition_required(IBV_QPT_RC, cur, next) == rc_required(cur, next),
		      "RC %s -> %s requires 0x%x, table says 0x%x", rocemu_qp_state_name(cur),
		      rocemu_qp_state_name(next), rc_required(cur, next),
		      rocemu_qp_transition_required(IBV_QPT_RC, cur, next));
}
END_TEST

START_TEST(test_rc_illegal_has_no_masks)
{
	enum ibv_qp_state cur = _i / NSTATES, next = _i % NSTATES;

	if (legal[cur][next])
		return;
	ck_assert_int_eq(rocemu_qp_transition_required(IBV_QPT_RC, cur, next), 0);
	ck_assert_int_eq(rocemu_qp_transition_optional(IBV_QPT_RC, cur, next), 0);
}
END_TEST

START_TEST(test_required_and_optional_disjoint)
{
	enum ibv_qp_state cur = _i / NSTATES, next = _i % NSTATES;
	int req = rocemu_qp_transition_required(IBV_QPT_RC, cur, next);
	int opt = rocemu_qp_transition_optional(IBV_QPT_RC, cur, next);

	ck_assert_int_eq(req & opt, 0);
	ck_assert_int_eq((req | opt) & IBV_QP_STATE, 0);
}
END_TEST

START_TEST(test_required_by_type)
{
	const struct required_case *c = &required_cases[_i];

	ck_assert_msg(rocemu_qp_transition_valid(c->type, c->cur, c->next), "type %d %s -> %s legal",
		      c->type, rocemu_qp_state_name(c->cur), rocemu_qp_state_name(c->next));
	ck_assert_msg(rocemu_qp_transition_required(c->type, c->cur, c->next) == c->mask,
		      "type %d %s -> %s requires 0x%x, got 0x%x", c->type,
		      rocemu_qp_state_name(c->cur), rocemu_qp_state_name(c->next), c->mask,
		      rocemu_qp_transition_required(c->type, c->cur, c->next));
}
END_TEST

START_TEST(test_rc_optional_allowed)
{
	const struct required_case *c = &rc_optional_cases[_i];
	int opt = rocemu_qp_transition_optional(c->type, c->cur, c->next);

	ck_assert_msg((opt & c->mask) == c->mask, "RC %s -> %s allows 0x%x, lacks 0x%x",
		      rocemu_qp_state_name(c->cur), rocemu_qp_state_name(c->next), opt,
		      c->mask & ~opt);
	ck_assert_int_eq(rocemu_qp_modify_mask_check(c->type, c->cur, c->next,
						     IBV_QP_STATE | c->mask |
						     rc_required(c->cur, c->next)), 0);
}
END_TEST

/* Every required attribute, left out alone, makes the modify fail. */
START_TEST(test_missing_required)
{
	const struct required_case *c = &required_cases[_i];
	int bit;

	ck_assert_int_eq(rocemu_qp_modify_mask_check(c->type, c->cur, c->next,
						     IBV_QP_STATE | c->mask), 0);
	for (bit = 0; bit < 31; bit++) {
		int attr = 1 << bit;

		if (!(c->mask & attr))
			continue;
		ck_assert_msg(rocemu_qp_modify_mask_check(c->type, c->cur, c->next,
							  IBV_QP_STATE | (c->mask & ~attr)) == -EINVAL,
			      "type %d %s -> %s without 0x%x accepted", c->type,
			      rocemu_qp_state_name(c->cur), rocemu_qp_state_name(c->next), attr);
	}
}
END_TEST

static const struct required_case forbidden_cases[] = {
	{ IBV_QPT_RC, RST, RST, IBV_QP_PORT },
	{ IBV_QPT_RC, RST, INI, RC_INIT_REQ | IBV_QP_SQ_PSN },
	{ IBV_QPT_RC, RST, INI, RC_INIT_REQ | IBV_QP_QKEY },
	{ IBV_QPT_RC, INI, INI, IBV_QP_AV },
	{ IBV_QPT_RC, INI, RTR, RC_RTR_REQ | IBV_QP_SQ_PSN },
	{ IBV_QPT_RC, INI, RTR, RC_RTR_REQ | IBV_QP_TIMEOUT },
	{ IBV_QPT_RC, RTR, RTS, RC_RTS_REQ | IBV_QP_PATH_MTU },
	{ IBV_QPT_RC, RTR, RTS, RC_RTS_REQ | IBV_QP_DEST_QPN },
	{ IBV_QPT_RC, RTS, RTS, IBV_QP_SQ_PSN },
	{ IBV_QPT_RC, RTS, SQD, IBV_QP_ACCESS_FLAGS },
	{ IBV_QPT_RC, SQD, RTS, IBV_QP_SQ_PSN },
	{ IBV_QPT_RC, INI, ERR, IBV_QP_ACCESS_FLAGS },
	{ IBV_QPT_RC, RTS, RST, IBV_QP_PORT },
	{ IBV_QPT_RC, ERR, ERR, IBV_QP_TIMEOUT },
	{ IBV_QPT_UD, RST, INI, IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY | IBV_QP_ACCESS_FLAGS },
	{ IBV_QPT_UC, RTR, RTS, IBV_QP_SQ_PSN | IBV_QP_TIMEOUT },
	/* An XRC initiator receives nothing, a target sends no requests (kernel qp_state_table). */
	{ IBV_QPT_XRC_SEND, INI, RTR, IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				      IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC },
	{ IBV_QPT_XRC_RECV, RTR, RTS, IBV_QP_TIMEOUT | IBV_QP_SQ_PSN | IBV_QP_RETRY_CNT },
	{ IBV_QPT_XRC_RECV, RTS, RTS, IBV_QP_CUR_STATE | IBV_QP_MAX_QP_RD_ATOMIC },
};

START_TEST(test_forbidden_attribute)
{
	const struct required_case *c = &forbidden_cases[_i];

	ck_assert_msg(rocemu_qp_modify_mask_check(c->type, c->cur, c->next,
						  IBV_QP_STATE | c->mask) == -EINVAL,
		      "type %d %s -> %s with mask 0x%x accepted", c->type,
		      rocemu_qp_state_name(c->cur), rocemu_qp_state_name(c->next), c->mask);
}
END_TEST

/* An illegal transition fails whatever the mask. */
START_TEST(test_illegal_transition_refused)
{
	enum ibv_qp_state cur = _i / NSTATES, next = _i % NSTATES;
	static const int masks[] = { 0, RC_INIT_REQ, RC_RTR_REQ, RC_RTS_REQ };
	int m;

	if (legal[cur][next])
		return;
	for (m = 0; m < N_ELEMS(masks); m++)
		ck_assert_msg(rocemu_qp_modify_mask_check(IBV_QPT_RC, cur, next,
							  IBV_QP_STATE | masks[m]) == -EINVAL,
			      "RC %s -> %s with mask 0x%x accepted", rocemu_qp_state_name(cur),
			      rocemu_qp_state_name(next), masks[m]);
}
END_TEST

START_TEST(test_legal_minimal_mask_accepted)
{
	enum ibv_qp_state cur = _i / NSTATES, next = _i % NSTATES;

	if (!legal[cur][next] || cur == SQE)	/* an RC QP never enters SQE */
		return;
	ck_assert_msg(rocemu_qp_modify_mask_check(IBV_QPT_RC, cur, next,
						  IBV_QP_STATE | rc_required(cur, next)) == 0,
		      "RC %s -> %s refused", rocemu_qp_state_name(cur), rocemu_qp_state_name(next));
}
END_TEST

/* IBV_QP_CUR_STATE names the current state; it is allowed from RTS, SQD, SQE only. */
START_TEST(test_cur_state)
{
	ck_assert_int_eq(rocemu_qp_modify_mask_check(IBV_QPT_RC, RTS, RTS,
						     IBV_QP_STATE | IBV_QP_CUR_STATE), 0);
	ck_assert_int_eq(rocemu_qp_modify_mask_check(IBV_QPT_RC, SQD, RTS,
						     IBV_QP_STATE | IBV_QP_CUR_STATE), 0);
	ck_assert_int_eq(rocemu_qp_modify_mask_check(IBV_QPT_UC, SQE, RTS,
						     IBV_QP_STATE | IBV_QP_CUR_STATE), 0);
	ck_assert_int_eq(rocemu_qp_modify_mask_check(IBV_QPT_UD, SQE, RTS,
						     IBV_QP_STATE | IBV_QP_CUR_STATE), 0);

	ck_assert_int_eq(rocemu_qp_modify_mask_check(IBV_QPT_RC, RST, INI,
						     IBV_QP_STATE | IBV_QP_CUR_STATE | RC_INIT_REQ),
			 -EINVAL);
	ck_assert_int_eq(rocemu_qp_modify_mask_check(IBV_QPT_RC, INI, INI,
						     IBV_QP_STATE | IBV_QP_CUR_STATE), -EINVAL);
	ck_assert_int_eq(rocemu_qp_modify_mask_check(IBV_QPT_RC, INI, RTR,
						     IBV_QP_STATE | IBV_QP_CUR_STATE | RC_RTR_REQ),
			 -EINVAL);
	ck_assert_int_eq(rocemu_qp_modify_mask_check(IBV_QPT_RC, ERR, RST,
						     IBV_QP_STATE | IBV_QP_CUR_STATE), -EINVAL);
	ck_assert_int_eq(rocemu_qp_modify_mask_check(IBV_QPT_RC, RTS, ERR,
						     IBV_QP_STATE | IBV_QP_CUR_STATE), -EINVAL);
}
END_TEST

/* Without IBV_QP_STATE the QP stays where it is: a cur -> cur transition. */
START_TEST(test_mask_without_state)
{
	ck_assert_int_eq(rocemu_qp_modify_mask_check(IBV_QPT_RC, RTS, RTS, IBV_QP_ACCESS_FLAGS), 0);
	ck_assert_int_eq(rocemu_qp_modify_mask_check(IBV_QPT_RC, RTS, RTS,
						     IBV_QP_MIN_RNR_TIMER | IBV_QP_ACCESS_FLAGS), 0);
	ck_assert_int_eq(rocemu_qp_modify_mask_check(IBV_QPT_RC, INI, INI, IBV_QP_PKEY_INDEX), 0);
	ck_assert_int_eq(rocemu_qp_modify_mask_check(IBV_QPT_RC, SQD, SQD, IBV_QP_TIMEOUT), 0);
	ck_assert_int_eq(rocemu_qp_modify_mask_check(IBV_QPT_RC, RTS, RTS, IBV_QP_SQ_PSN), -EINVAL);
	ck_assert_int_eq(rocemu_qp_modify_mask_check(IBV_QPT_RC, RTR, RTR, IBV_QP_ACCESS_FLAGS),
			 -EINVAL);
	ck_assert_int_eq(rocemu_qp_modify_mask_check(IBV_QPT_RC, RST, RST, IBV_QP_PORT), -EINVAL);
}
END_TEST

START_TEST(test_state_names)
{
	static const char *const names[NSTATES] = {
		"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR",
	};
	int s;

	for (s = 0; s < NSTATES; s++)
		ck_assert_str_eq(rocemu_qp_state_name(s), names[s]);
	ck_assert_str_eq(rocemu_qp_state_name(IBV_QPS_UNKNOWN), "?");
	ck_assert_str_eq(rocemu_qp_state_name((enum ibv_qp_state)100), "?");
	ck_assert_str_eq(rocemu_qp_state_name((enum ibv_qp_state)-1), "?");
}
END_TEST

static Suite *qp_state_suite(void)
{
	Suite *s = suite_create("qp_state");
	TCase *table = tcase_create("table");
	TCase *check = tcase_create("mask_check");

	tcase_add_loop_test(table, test_rc_legality_table, 0, NSTATES * NSTATES);
	tcase_add_loop_test(table, test_rc_required_masks, 0, NSTATES * NSTATES);
	tcase_add_loop_test(table, test_rc_illegal_has_no_masks, 0, NSTATES * NSTATES);
	tcase_add_loop_test(table, test_required_and_optional_disjoint, 0, NSTATES * NSTATES);
	tcase_add_loop_test(table, test_required_by_type, 0, N_ELEMS(required_cases));
	tcase_add_test(table, test_state_names);
	suite_add_tcase(s, table);

	tcase_add_loop_test(check, test_rc_optional_allowed, 0, N_ELEMS(rc_optional_cases));
	tcase_add_loop_test(check, test_missing_required, 0, N_ELEMS(required_cases));
	tcase_add_loop_test(check, test_forbidden_attribute, 0, N_ELEMS(forbidden_cases));
	tcase_add_loop_test(check, test_illegal_transition_refused, 0, NSTATES * NSTATES);
	tcase_add_loop_test(check, test_legal_minimal_mask_accepted, 0, NSTATES * NSTATES);
	tcase_add_test(check, test_cur_state);
	tcase_add_test(check, test_mask_without_state);
	suite_add_tcase(s, check);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(qp_state_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
