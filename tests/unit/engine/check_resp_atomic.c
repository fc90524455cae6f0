/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Responder atomics (emulator/rc/resp_atomic.c): compare-and-swap writes
 * only on a match, fetch-and-add wraps at 2^64, both give back the value
 * before; a VA not 8-byte aligned, a key without remote atomic access and
 * 8 bytes past the MR are refused before any byte moves. The replay cache
 * keeps the last max_dest_rd_atomic results (16 at most): a duplicate
 * request is answered from it and never executed again, one older than
 * the cache is dropped and counted. Each both through the function and on
 * the fake wire.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emulator/obj/qp.h"
#include "emulator/rc/rc.h"
#include "emulator/rc/resp_atomic.h"
#include "tests/unit/fixture.h"

#define ATMETH_BYTES 28

static void put_u64(uint32_t off, uint64_t v)
{
	memcpy(fx.buf + off, &v, sizeof(v));
}

static uint64_t get_u64(uint32_t off)
{
	uint64_t v;

	memcpy(&v, fx.buf + off, sizeof(v));
	return v;
}

/* Execute an atomic at fx.buf + off through key as the responder does; its error or 0. */
static int execute(uint32_t key, uint32_t off, bool cmp_swap, uint64_t swap_add,
		   uint64_t compare, uint64_t *orig)
{
	uint8_t atmeth[ATMETH_BYTES];

	rocemu_atmeth_set_va(atmeth, (uintptr_t)(fx.buf + off));
	rocemu_atmeth_set_rkey(atmeth, key);
	rocemu_atmeth_set_swap_add(atmeth, swap_add);
	rocemu_atmeth_set_compare(atmeth, compare);
	return rocemu_atomic_execute(fx_emu_qp(), atmeth, cmp_swap, orig);
}

/* The peer's atomic request at psn; its acknowledge's original value, checked as packet i. */
static uint64_t rx_atomic(unsigned int i, uint8_t opcode, uint32_t psn, uint32_t off,
			  uint64_t swap_add, uint64_t compare)
{
	const struct fx_hdrs h = { .psn = psn, .va = (uintptr_t)(fx.buf + off), .rkey = fx.rkey,
				   .swap_add = swap_add, .compare = compare };
	const uint8_t *bth;

	fx_rx_build(opcode, &h, NULL, 0);
	ck_assert_uint_eq(fx.nwire, i + 1);
	bth = fx_wire_expect(i, ROCEMU_OP_RC_ATOMIC_ACKNOWLEDGE, psn, false, 0);
	return rocemu_atmack_orig(rocemu_pkt_atmack((uint8_t *)bth));
}

START_TEST(test_compare_swap)
{
	uint64_t orig = 0;

	put_u64(64, 0x1111);
	ck_assert_int_eq(execute(fx.rkey, 64, true, 0x2222, 0x1111, &orig), 0);
	ck_assert_uint_eq(orig, 0x1111);
	ck_assert_uint_eq(get_u64(64), 0x2222);
	/* No match: the value before, nothing written. */
	ck_assert_int_eq(execute(fx.rkey, 64, true, 0x3333, 0x1111, &orig), 0);
	ck_assert_uint_eq(orig, 0x2222);
	ck_assert_uint_eq(get_u64(64), 0x2222);
}
END_TEST

START_TEST(test_fetch_add_wraps)
{
	uint64_t orig = 0;

	put_u64(128, UINT64_MAX - 1);
	ck_assert_int_eq(execute(fx.rkey, 128, false, 3, 0, &orig), 0);
	ck_assert_uint_eq(orig, UINT64_MAX - 1);
	ck_assert_uint_eq(get_u64(128), 1);
	/* The compare field means nothing to fetch-and-add. */
	ck_assert_int_eq(execute(fx.rkey, 128, false, 10, 12345, &orig), 0);
	ck_assert_uint_eq(orig, 1);
	ck_assert_uint_eq(get_u64(128), 11);
}
END_TEST

/* Refused before any byte moves: misaligned, no atomic right, past the MR, unknown key. */
START_TEST(test_refused_untouched)
{
	uint32_t no_atomic = fx_mr_reg(fx.client, fx.pdn, fx.buf, 4096,
				       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				       IBV_ACCESS_REMOTE_READ);
	uint64_t orig = 0xdead;

	put_u64(64, 5);
	put_u64(72, 5);
	ck_assert_int_eq(execute(fx.rkey, 66, false, 1, 0, &orig), -EINVAL);
	ck_assert_int_eq(execute(no_atomic, 64, false, 1, 0, &orig), -EACCES);
	ck_assert_int_eq(execute(fx.rkey, FX_BUF_BYTES, false, 1, 0, &orig), -ERANGE);
	ck_assert_int_eq(execute(fx.rkey ^ 0x80, 64, true, 1, 5, &orig), -ENOKEY);
	ck_assert_uint_eq(orig, 0xdead);
	ck_assert_uint_eq(get_u64(64), 5);
	ck_assert_uint_eq(get_u64(72), 5);
}
END_TEST

/* The cache keeps depth results, the oldest going first; depth 0 or past 16 is 16. */
START_TEST(test_replay_cache_depth)
{
	struct rocemu_rc_resp resp = { .mem = calloc(1, sizeof(*resp.mem)) };
	uint64_t orig;
	uint32_t psn;

	ck_assert_ptr_nonnull(resp.mem);
	for (psn = 0; psn < 3; psn++)
		rocemu_atomic_replay_save(&resp, 2, psn, 1000 + psn);
	ck_assert(!rocemu_atomic_replay_find(&resp, 0, &orig));
	ck_assert(rocemu_atomic_replay_find(&resp, 1, &orig));
	ck_assert_uint_eq(orig, 1001);
	ck_assert(rocemu_atomic_replay_find(&resp, 2, &orig));
	ck_assert_uint_eq(orig, 1002);
	memset(resp.mem, 0, sizeof(*resp.mem));
	resp.atomic_next = 0;
	for (psn = 0; psn <= ROCEMU_ATOMIC_REPLAY_MAX; psn++)
		rocemu_atomic_replay_save(&resp, 0, psn, psn * 3);
	ck_assert(!rocemu_atomic_replay_find(&resp, 0, &orig));
	for (psn = 1; psn <= ROCEMU_ATOMIC_REPLAY_MAX; psn++) {
		ck_assert(rocemu_atomic_replay_find(&resp, psn, &orig));
		ck_assert_uint_eq(orig, psn * 3);
	}
	rocemu_atomic_replay_save(&resp, ROCEMU_ATOMIC_REPLAY_MAX + 5, 100, 7);
	ck_assert(!rocemu_atomic_replay_find(&resp, 1, &orig));
	ck_assert(rocemu_atomic_replay_find(&resp, 100, &orig));
	free(resp.mem);
	/* A responder that never took an atomic has no cache. */
	resp.mem = NULL;
	ck_assert(!rocemu_atomic_replay_find(&resp, 100, &orig));
}
END_TEST

/* On the wire: a compare-and-swap and its duplicate, answered with the same value, executed once. */
START_TEST(test_duplicate_cas_replayed)
{
	put_u64(64, 40);
	ck_assert_uint_eq(rx_atomic(0, ROCEMU_OP_RC_COMPARE_SWAP, FX_RQ_PSN, 64, 41, 40), 40);
	ck_assert_uint_eq(get_u64(64), 41);
	/* Changed locally meanwhile: the duplicate would match now, yet is not executed. */
	put_u64(64, 40);
	ck_assert_uint_eq(rx_atomic(1, ROCEMU_OP_RC_COMPARE_SWAP, FX_RQ_PSN, 64, 41, 40), 40);
	ck_assert_uint_eq(get_u64(64), 40);
	ck_assert_uint_eq(fx.dev->counters.rx_stale_atomics, 0);
}
END_TEST

/*
 * max_dest_rd_atomic atomics later, the first one's result is gone: its
 * duplicate is dropped and counted, a newer one's is still answered.
 */
START_TEST(test_duplicate_past_the_cache_dropped)
{
	uint32_t i;

	put_u64(64, 0);
	for (i = 0; i <= FX_RD_ATOMIC; i++)
		ck_assert_uint_eq(rx_atomic(i, ROCEMU_OP_RC_FETCH_ADD, FX_RQ_PSN + i, 64, 1, 0), i);
	ck_assert_uint_eq(get_u64(64), FX_RD_ATOMIC + 1);
	fx_wire_clear();
	fx_rx_build(ROCEMU_OP_RC_FETCH_ADD,
		    &(struct fx_hdrs){ .psn = FX_RQ_PSN, .va = (uintptr_t)(fx.buf + 64),
				       .rkey = fx.rkey, .swap_add = 1 }, NULL, 0);
	ck_assert_uint_eq(fx.nwire, 0);
	ck_assert_uint_eq(fx.dev->counters.rx_stale_atomics, 1);
	ck_assert_uint_eq(rx_atomic(0, ROCEMU_OP_RC_FETCH_ADD, FX_RQ_PSN + 1, 64, 1, 0), 1);
	ck_assert_uint_eq(get_u64(64), FX_RD_ATOMIC + 1);
}
END_TEST

/* A misaligned atomic on the wire: NAK invalid request, the QP in ERR (QP_REQ_ERR), memory as it was. */
START_TEST(test_misaligned_on_the_wire)
{
	const struct fx_hdrs h = { .psn = FX_RQ_PSN, .va = (uintptr_t)(fx.buf + 68),
				   .rkey = fx.rkey, .swap_add = 1 };
	uint8_t *aeth;

	put_u64(64, 9);
	put_u64(72, 9);
	fx_rx_build(ROCEMU_OP_RC_FETCH_ADD, &h, NULL, 0);
	ck_assert_uint_eq(fx.nwire, 1);
	aeth = rocemu_pkt_aeth((uint8_t *)fx_wire_expect(0, ROCEMU_OP_RC_ACKNOWLEDGE, FX_RQ_PSN,
							  false, 0));
	ck_assert_uint_eq(rocemu_aeth_syndrome_type(rocemu_aeth_syndrome(aeth)), ROCEMU_AETH_NAK);
	ck_assert_uint_eq(rocemu_aeth_syndrome_value(rocemu_aeth_syndrome(aeth)),
			  ROCEMU_NAK_INVALID_REQUEST);
	fx_expect_qp_error(IBV_EVENT_QP_REQ_ERR);
	ck_assert_uint_eq(get_u64(64), 9);
	ck_assert_uint_eq(get_u64(72), 9);
}
END_TEST

static Suite *resp_atomic_suite(void)
{
	Suite *s = suite_create("resp_atomic");
	TCase *tc = tcase_create("resp_atomic");

	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_add_test(tc, test_compare_swap);
	tcase_add_test(tc, test_fetch_add_wraps);
	tcase_add_test(tc, test_refused_untouched);
	tcase_add_test(tc, test_replay_cache_depth);
	tcase_add_test(tc, test_duplicate_cas_replayed);
	tcase_add_test(tc, test_duplicate_past_the_cache_dropped);
	tcase_add_test(tc, test_misaligned_on_the_wire);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return fx_suite_run(resp_atomic_suite());
}
