/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The shim's record of an rdma_cm file's ids (lib/cm/ucma_ids.c), fed the
 * ABI bytes of librdmacm's commands and the daemon's answers as ucma.c
 * passes them, and what it answers once the daemon is gone: one
 * RDMA_CM_EVENT_DEVICE_REMOVAL per id, then ENODEV; DESTROY_ID with the
 * count of events the id was given, as the kernel's ucma counts them.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_cma_abi.h>

#include "lib/shim.h"
#include "lib/cm/ucma.h"

static struct rocemu_ucma_ids ids, other;

static void ids_open(void)
{
	memset(&ids, 0, sizeof(ids));
	memset(&other, 0, sizeof(other));
}

static void ids_close(void)
{
	free(ids.v);
	free(other.v);
}

/* A CREATE_ID for uid that the daemon answered with handle. */
static void note_create(struct rocemu_ucma_ids *to, uint64_t uid, uint32_t handle)
{
	struct ucma_abi_create_id cmd = { .cmd = UCMA_CMD_CREATE_ID, .in = sizeof(cmd) - 8,
					  .out = sizeof(struct ucma_abi_create_id_resp),
					  .uid = uid, .ps = RDMA_PS_TCP, .qp_type = IBV_QPT_RC };
	struct ucma_abi_create_id_resp resp = { .id = handle };

	rocemu_ucma_ids_note(to, &cmd, &resp);
}

/* An event GET_EVENT gave: uid, the id it names, what it is. */
static void note_event(uint64_t uid, uint32_t handle, uint32_t event)
{
	struct ucma_abi_get_event cmd = { .cmd = UCMA_CMD_GET_EVENT, .in = sizeof(cmd) - 8,
					  .out = sizeof(struct ucma_abi_event_resp) };
	struct ucma_abi_event_resp resp = { .uid = uid, .id = handle, .event = event };

	rocemu_ucma_ids_note(&ids, &cmd, &resp);
}

/* GET_EVENT with the daemon gone, its answer written where the command says (out bytes of it). */
static int lost_event(struct ucma_abi_event_resp *resp, uint16_t out)
{
	struct ucma_abi_get_event cmd = { .cmd = UCMA_CMD_GET_EVENT, .in = sizeof(cmd) - 8,
					  .out = out, .response = (uintptr_t)resp };

	return rocemu_ucma_ids_lost(&ids, &cmd);
}

/* DESTROY_ID with the daemon gone: 0 or -errno, the events reported in *reported. */
static int lost_destroy(uint32_t handle, uint32_t *reported)
{
	struct ucma_abi_destroy_id_resp resp = { .events_reported = 0xdead };
	struct ucma_abi_destroy_id cmd = { .cmd = UCMA_CMD_DESTROY_ID, .in = sizeof(cmd) - 8,
					   .out = sizeof(resp), .response = (uintptr_t)&resp,
					   .id = handle };
	int ret = rocemu_ucma_ids_lost(&ids, &cmd);

	*reported = resp.events_reported;
	return ret;
}

/* Each id gets one DEVICE_REMOVAL naming its uid and handle; then there is nothing: ENODEV. */
START_TEST(test_one_removal_per_id)
{
	struct ucma_abi_event_resp resp;
	uint64_t seen_uid[2];
	uint32_t seen_id[2];

	note_create(&ids, 0x1000, 1);
	note_create(&ids, 0x2000, 2);
	for (int i = 0; i < 2; i++) {
		memset(&resp, 0xff, sizeof(resp));
		ck_assert_int_eq(lost_event(&resp, sizeof(resp)), 0);
		ck_assert_uint_eq(resp.event, RDMA_CM_EVENT_DEVICE_REMOVAL);
		ck_assert_uint_eq(resp.status, 0);
		seen_uid[i] = resp.uid;
		seen_id[i] = resp.id;
	}
	ck_assert_uint_eq(seen_uid[0], 0x1000);
	ck_assert_uint_eq(seen_id[0], 1);
	ck_assert_uint_eq(seen_uid[1], 0x2000);
	ck_assert_uint_eq(seen_id[1], 2);
	ck_assert_int_eq(lost_event(&resp, sizeof(resp)), -ENODEV);
}
END_TEST

/* The answer is cut to the command's out bytes, as the kernel copies at most that much. */
START_TEST(test_removal_cut_to_out)
{
	struct ucma_abi_event_resp resp;

	note_create(&ids, 0x1122334455667788ull, 7);
	memset(&resp, 0xab, sizeof(resp));
	ck_assert_int_eq(lost_event(&resp, sizeof(resp.uid)), 0);
	ck_assert_uint_eq(resp.uid, 0x1122334455667788ull);
	ck_assert_uint_eq(resp.id, 0xabababab);	/* past out: untouched */
}
END_TEST

/* DESTROY_ID counts the events GET_EVENT gave with the id's uid, the removal among them. */
START_TEST(test_destroy_reports_events)
{
	struct ucma_abi_event_resp resp;
	uint32_t reported;

	note_create(&ids, 0x1000, 1);
	note_create(&ids, 0x2000, 2);
	note_event(0x1000, 1, RDMA_CM_EVENT_ADDR_RESOLVED);
	note_event(0x1000, 1, RDMA_CM_EVENT_ROUTE_RESOLVED);
	note_event(0x2000, 2, RDMA_CM_EVENT_ADDR_ERROR);
	ck_assert_int_eq(lost_event(&resp, sizeof(resp)), 0);	/* id 1's removal */
	ck_assert_uint_eq(resp.id, 1);
	ck_assert_int_eq(lost_destroy(1, &reported), 0);
	ck_assert_uint_eq(reported, 3);
	ck_assert_int_eq(lost_destroy(2, &reported), 0);
	ck_assert_uint_eq(reported, 1);
	ck_assert_uint_eq(ids.n, 0);
	/* Gone, and no more removals to give. */
	ck_assert_int_eq(lost_destroy(1, &reported), -ENOENT);
	ck_assert_int_eq(lost_event(&resp, sizeof(resp)), -ENODEV);
}
END_TEST

/* A DESTROY_ID that went through forgets the id: no removal for it later. */
START_TEST(test_destroyed_id_forgotten)
{
	struct ucma_abi_destroy_id cmd = { .cmd = UCMA_CMD_DESTROY_ID, .id = 1 };
	struct ucma_abi_destroy_id_resp resp = { 0 };
	struct ucma_abi_event_resp ev;

	note_create(&ids, 0x1000, 1);
	note_create(&ids, 0x2000, 2);
	rocemu_ucma_ids_note(&ids, &cmd, &resp);
	ck_assert_int_eq(lost_event(&ev, sizeof(ev)), 0);
	ck_assert_uint_eq(ev.id, 2);
	ck_assert_int_eq(lost_event(&ev, sizeof(ev)), -ENODEV);
}
END_TEST

/*
 * A CONNECT_REQUEST brings a new id, counted on the listener; the new id
 * counts and gets events only once a connected ACCEPT gave it its uid
 * (before, the kernel's ucma ignores them: the ctx has uid 0).
 */
START_TEST(test_connect_request_and_accept)
{
	struct ucma_abi_accept accept = { .cmd = UCMA_CMD_ACCEPT, .uid = 0x3000, .id = 9 };
	struct ucma_abi_event_resp ev;
	uint32_t reported;

	note_create(&ids, 0x1000, 1);
	note_event(0x1000, 9, RDMA_CM_EVENT_CONNECT_REQUEST);
	ck_assert_uint_eq(ids.n, 2);
	/* An ACCEPT without connection parameters gives no uid, as the kernel's ucma_accept. */
	rocemu_ucma_ids_note(&ids, &accept, NULL);
	note_event(0x1000, 1, RDMA_CM_EVENT_DISCONNECTED);
	accept.conn_param.valid = 1;
	rocemu_ucma_ids_note(&ids, &accept, NULL);
	note_event(0x3000, 9, RDMA_CM_EVENT_ESTABLISHED);
	ck_assert_int_eq(lost_destroy(1, &reported), 0);
	ck_assert_uint_eq(reported, 2);	/* CONNECT_REQUEST and DISCONNECTED */
	ck_assert_int_eq(lost_event(&ev, sizeof(ev)), 0);
	ck_assert_uint_eq(ev.id, 9);
	ck_assert_uint_eq(ev.uid, 0x3000);
	ck_assert_int_eq(lost_destroy(9, &reported), 0);
	ck_assert_uint_eq(reported, 2);	/* ESTABLISHED and the removal */
}
END_TEST

/*
 * A request not yet accepted when the daemon goes: no DEVICE_REMOVAL for
 * it, and its DESTROY_ID reports none of its listener's events, which
 * librdmacm completes on the listener (rdma_destroy_id would wait for
 * them for ever).
 */
START_TEST(test_unaccepted_request_counts_nothing)
{
	struct ucma_abi_event_resp ev;
	uint32_t reported;

	note_create(&ids, 0x1000, 1);
	note_event(0x1000, 8, RDMA_CM_EVENT_CONNECT_REQUEST);
	note_event(0x1000, 9, RDMA_CM_EVENT_CONNECT_REQUEST);
	ck_assert_int_eq(lost_event(&ev, sizeof(ev)), 0);
	ck_assert_uint_eq(ev.id, 1);
	ck_assert_int_eq(lost_event(&ev, sizeof(ev)), -ENODEV);
	ck_assert_int_eq(lost_destroy(8, &reported), 0);
	ck_assert_uint_eq(reported, 0);
	ck_assert_int_eq(lost_destroy(9, &reported), 0);
	ck_assert_uint_eq(reported, 0);
	ck_assert_int_eq(lost_destroy(1, &reported), 0);
	ck_assert_uint_eq(reported, 3);	/* two requests and the removal */
}
END_TEST

/* MIGRATE_ID: the id and its count go to the other file; an unknown id or the same file: nothing. */
START_TEST(test_move_between_files)
{
	struct ucma_abi_event_resp ev;

	note_create(&ids, 0x1000, 1);
	note_create(&ids, 0x2000, 2);
	note_event(0x1000, 1, RDMA_CM_EVENT_ADDR_RESOLVED);
	rocemu_ucma_ids_move(&ids, &other, 1);
	rocemu_ucma_ids_move(&ids, &other, 42);
	rocemu_ucma_ids_move(&ids, &ids, 2);
	ck_assert_uint_eq(ids.n, 1);
	ck_assert_uint_eq(ids.v[0].handle, 2);
	ck_assert_uint_eq(other.n, 1);
	ck_assert_uint_eq(other.v[0].handle, 1);
	ck_assert_uint_eq(other.v[0].uid, 0x1000);
	ck_assert_uint_eq(other.v[0].events_reported, 1);
	ck_assert_int_eq(lost_event(&ev, sizeof(ev)), 0);
	ck_assert_uint_eq(ev.id, 2);
	ck_assert_int_eq(lost_event(&ev, sizeof(ev)), -ENODEV);
}
END_TEST

/* Any other command with the daemon gone is ENODEV, as for a device that went away. */
START_TEST(test_other_commands_enodev)
{
	struct ucma_abi_listen listen = { .cmd = UCMA_CMD_LISTEN, .id = 1 };

	note_create(&ids, 0x1000, 1);
	ck_assert_int_eq(rocemu_ucma_ids_lost(&ids, &listen), -ENODEV);
	ck_assert_uint_eq(ids.n, 1);
}
END_TEST

/* Many ids: the record grows past its first allocation and keeps each. */
START_TEST(test_many_ids)
{
	struct ucma_abi_event_resp ev;
	uint32_t reported;

	for (uint32_t i = 0; i < 100; i++)
		note_create(&ids, 0x10000 + i, i);
	ck_assert_uint_eq(ids.n, 100);
	ck_assert_uint_ge(ids.cap, 100);
	for (uint32_t i = 0; i < 100; i++) {
		ck_assert_int_eq(lost_event(&ev, sizeof(ev)), 0);
		ck_assert_uint_eq(ev.uid, 0x10000 + ev.id);
	}
	ck_assert_int_eq(lost_event(&ev, sizeof(ev)), -ENODEV);
	for (uint32_t i = 0; i < 100; i++) {
		ck_assert_int_eq(lost_destroy(i, &reported), 0);
		ck_assert_uint_eq(reported, 1);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ucma_ids");
	TCase *tc = tcase_create("ids");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, ids_open, ids_close);
	tcase_add_test(tc, test_one_removal_per_id);
	tcase_add_test(tc, test_removal_cut_to_out);
	tcase_add_test(tc, test_destroy_reports_events);
	tcase_add_test(tc, test_destroyed_id_forgotten);
	tcase_add_test(tc, test_connect_request_and_accept);
	tcase_add_test(tc, test_unaccepted_request_counts_nothing);
	tcase_add_test(tc, test_move_between_files);
	tcase_add_test(tc, test_other_commands_enodev);
	tcase_add_test(tc, test_many_ids);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
