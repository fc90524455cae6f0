/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Async events (emulator/obj/async_event.c) as ibv_get_async_event reads
 * them from the context's pipe: one record per event with its element
 * (the application's own pointer, for a QP its user_qp) and type, in
 * order; a type without a name still delivered; a client that never reads
 * loses the events past the pipe's capacity without stalling the daemon.
 */
#include <check.h>
#include <fcntl.h>

#include "emulator/obj/async_event.h"
#include "tests/unit/fixture.h"

START_TEST(test_record_of_element_and_type)
{
	struct rocemu_async_record rec;

	rocemu_async_event(fx.client, 1, IBV_EVENT_PORT_ACTIVE);
	rocemu_async_event(fx.client, FX_USER_CQ, IBV_EVENT_CQ_ERR);
	ck_assert(fx_async_event(&rec));
	ck_assert_uint_eq(rec.element, 1);
	ck_assert_uint_eq(rec.event_type, IBV_EVENT_PORT_ACTIVE);
	ck_assert_uint_eq(rec.reserved, 0);
	ck_assert(fx_async_event(&rec));
	ck_assert_uint_eq(rec.element, FX_USER_CQ);
	ck_assert_uint_eq(rec.event_type, IBV_EVENT_CQ_ERR);
	ck_assert(!fx_async_event(&rec));
}
END_TEST

/* A QP's event names the application's ibv_qp, not its number. */
START_TEST(test_qp_event_names_user_qp)
{
	struct rocemu_async_record rec;

	rocemu_async_event_qp(fx_emu_qp(), IBV_EVENT_COMM_EST);
	ck_assert(fx_async_event(&rec));
	ck_assert_uint_eq(rec.element, FX_USER_QP);
	ck_assert_uint_eq(rec.event_type, IBV_EVENT_COMM_EST);
	ck_assert(!fx_async_event(&rec));
}
END_TEST

/* A type past the table of names (a newer verbs event) goes to the client as it is. */
START_TEST(test_unnamed_type_delivered)
{
	struct rocemu_async_record rec;

	rocemu_async_event_qp(fx_emu_qp(), (enum ibv_event_type)200);
	ck_assert(fx_async_event(&rec));
	ck_assert_uint_eq(rec.event_type, 200);
	ck_assert_uint_eq(rec.element, FX_USER_QP);
}
END_TEST

/* A full pipe drops the newest events and never blocks; the older ones stay, in order. */
START_TEST(test_full_pipe_drops_newest)
{
	int capacity = fcntl(fx.async_fd, F_GETPIPE_SZ);
	unsigned int fits, i;
	struct rocemu_async_record rec;

	ck_assert_int_gt(capacity, 0);
	fits = (unsigned int)capacity / sizeof(rec);
	for (i = 0; i < fits + 8; i++)
		rocemu_async_event(fx.client, i, IBV_EVENT_SRQ_LIMIT_REACHED);
	for (i = 0; i < fits; i++) {
		ck_assert(fx_async_event(&rec));
		ck_assert_uint_eq(rec.element, i);
	}
	ck_assert(!fx_async_event(&rec));
	/* Room again: the next event is delivered. */
	rocemu_async_event(fx.client, 7, IBV_EVENT_SRQ_ERR);
	ck_assert(fx_async_event(&rec));
	ck_assert_uint_eq(rec.element, 7);
}
END_TEST

static Suite *async_event_suite(void)
{
	Suite *s = suite_create("async_event");
	TCase *tc = tcase_create("async_event");

	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_add_test(tc, test_record_of_element_and_type);
	tcase_add_test(tc, test_qp_event_names_user_qp);
	tcase_add_test(tc, test_unnamed_type_delivered);
	tcase_add_test(tc, test_full_pipe_drops_newest);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return fx_suite_run(async_event_suite());
}
