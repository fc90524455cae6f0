/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The shim's QPs by qpn (lib/datapath/qp_table.c), as the poller finds the
 * QP of a CQE: a QP found by its own qpn only, neither by another of its
 * chunk nor by one of the same slot in another chunk; removal clearing
 * only the QP that holds the slot; the first QP a predicate picks; an XRC
 * initiator (no receive CQ) removed under its send CQ's lock alone.
 */
#include <check.h>
#include <pthread.h>
#include <stdlib.h>

#include "lib/shim.h"

#define QPN 0x000123
#define SAME_CHUNK (QPN + 1)
#define SAME_SLOT (QPN + (1u << ROCEMU_QP_TABLE_SHIFT))

static struct rocemu_context *rctx;
static struct rocemu_cq send_cq, recv_cq;

static void setup(void)
{
	rctx = calloc(1, sizeof(*rctx));
	ck_assert_ptr_nonnull(rctx);
	ck_assert_int_eq(pthread_mutex_init(&rctx->vctx.context.mutex, NULL), 0);
	ck_assert_int_eq(pthread_spin_init(&send_cq.lock, PTHREAD_PROCESS_PRIVATE), 0);
	ck_assert_int_eq(pthread_spin_init(&recv_cq.lock, PTHREAD_PROCESS_PRIVATE), 0);
}

static void teardown(void)
{
	rocemu_qp_table_free(rctx);
	pthread_mutex_destroy(&rctx->vctx.context.mutex);
	pthread_spin_destroy(&send_cq.lock);
	pthread_spin_destroy(&recv_cq.lock);
	free(rctx);
}

static struct rocemu_qp qp_of(uint32_t qpn, bool has_recv_cq)
{
	struct rocemu_qp qp = { .qpn = qpn };

	qp.qpx.qp_base.send_cq = (struct ibv_cq *)&send_cq.ibcq;
	qp.qpx.qp_base.recv_cq = has_recv_cq ? (struct ibv_cq *)&recv_cq.ibcq : NULL;
	return qp;
}

START_TEST(test_find_by_qpn)
{
	struct rocemu_qp a = qp_of(QPN, true), b = qp_of(SAME_SLOT, true);

	ck_assert_ptr_null(rocemu_qp_table_find(rctx, QPN));
	ck_assert_int_eq(rocemu_qp_table_insert(rctx, &a), 0);
	ck_assert_ptr_eq(rocemu_qp_table_find(rctx, QPN), &a);
	ck_assert_ptr_null(rocemu_qp_table_find(rctx, SAME_CHUNK));
	ck_assert_ptr_null(rocemu_qp_table_find(rctx, SAME_SLOT));
	ck_assert_int_eq(rocemu_qp_table_insert(rctx, &b), 0);
	ck_assert_ptr_eq(rocemu_qp_table_find(rctx, SAME_SLOT), &b);
	ck_assert_ptr_eq(rocemu_qp_table_find(rctx, QPN), &a);
	rocemu_qp_table_remove(rctx, &a);
	ck_assert_ptr_null(rocemu_qp_table_find(rctx, QPN));
	ck_assert_ptr_eq(rocemu_qp_table_find(rctx, SAME_SLOT), &b);
}
END_TEST

/* A QP gone whose qpn came back to a new QP: removing the old one leaves the new. */
START_TEST(test_remove_only_its_own)
{
	struct rocemu_qp old = qp_of(QPN, true), reborn = qp_of(QPN, true);

	ck_assert_int_eq(rocemu_qp_table_insert(rctx, &old), 0);
	ck_assert_int_eq(rocemu_qp_table_insert(rctx, &reborn), 0);
	rocemu_qp_table_remove(rctx, &old);
	ck_assert_ptr_eq(rocemu_qp_table_find(rctx, QPN), &reborn);
}
END_TEST

START_TEST(test_xrc_initiator_removed)
{
	struct rocemu_qp ini = qp_of(QPN, false);

	ck_assert_int_eq(rocemu_qp_table_insert(rctx, &ini), 0);
	rocemu_qp_table_remove(rctx, &ini);
	ck_assert_ptr_null(rocemu_qp_table_find(rctx, QPN));
	/* Its CQ's lock was let go. */
	ck_assert_int_eq(pthread_spin_trylock(&send_cq.lock), 0);
	pthread_spin_unlock(&send_cq.lock);
}
END_TEST

static bool qpn_above(struct rocemu_qp *qp, void *arg)
{
	return qp->qpn > *(uint32_t *)arg;
}

START_TEST(test_first)
{
	struct rocemu_qp a = qp_of(QPN, true), b = qp_of(SAME_CHUNK, true),
			 c = qp_of(SAME_SLOT, true);
	uint32_t bound = QPN;

	ck_assert_ptr_null(rocemu_qp_table_first(rctx, qpn_above, &bound));
	ck_assert_int_eq(rocemu_qp_table_insert(rctx, &c), 0);
	ck_assert_int_eq(rocemu_qp_table_insert(rctx, &b), 0);
	ck_assert_int_eq(rocemu_qp_table_insert(rctx, &a), 0);
	/* In qpn order: b comes before c. */
	ck_assert_ptr_eq(rocemu_qp_table_first(rctx, qpn_above, &bound), &b);
	bound = SAME_CHUNK;
	ck_assert_ptr_eq(rocemu_qp_table_first(rctx, qpn_above, &bound), &c);
	bound = SAME_SLOT;
	ck_assert_ptr_null(rocemu_qp_table_first(rctx, qpn_above, &bound));
}
END_TEST

static Suite *qp_table_suite(void)
{
	Suite *s = suite_create("qp_table");
	TCase *tc = tcase_create("qp_table");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_find_by_qpn);
	tcase_add_test(tc, test_remove_only_its_own);
	tcase_add_test(tc, test_xrc_initiator_removed);
	tcase_add_test(tc, test_first);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(qp_table_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
