/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The responder's coalesced acknowledges (emulator/rc/resp_ack.c): an ACK
 * waits until the turn ends and a newer one of its QP replaces it, so one
 * leaves with the last PSN, MSN and syndrome; a forgotten one never
 * leaves, nor one of a QP gone to ERR; a DCT never waits; past the QPs
 * that may wait at once, an ACK is to leave at once. On the wire: a
 * burst's ACK leaves before the NAK (RNR, PSN sequence) the responder
 * sends next, each with its code.
 */
#include <check.h>
#include <stdlib.h>

#include "emulator/obj/qp.h"
#include "emulator/rc/rc.h"
#include "tests/unit/fixture.h"

#define WAITING_QPS_MAX 64		/* resp_ack.c's DEFERRED_MAX */

static uint8_t payload[64];

static uint8_t ack_syndrome(void)
{
	return rocemu_aeth_syndrome_make(ROCEMU_AETH_ACK, ROCEMU_AETH_CREDITS_INVALID);
}

/* Packet i is an acknowledge for psn of AETH type and value (NAKs, RNR NAKs) with msn. */
static void expect_ack(unsigned int i, uint32_t psn, enum rocemu_aeth_type type, uint8_t value,
		       uint32_t msn)
{
	const uint8_t *bth = fx_wire_expect(i, ROCEMU_OP_RC_ACKNOWLEDGE, psn, false, 0);
	uint8_t *aeth = rocemu_pkt_aeth((uint8_t *)bth);

	ck_assert_uint_eq(rocemu_aeth_syndrome_type(rocemu_aeth_syndrome(aeth)), type);
	if (type != ROCEMU_AETH_ACK)
		ck_assert_uint_eq(rocemu_aeth_syndrome_value(rocemu_aeth_syndrome(aeth)), value);
	ck_assert_uint_eq(rocemu_aeth_msn(aeth), msn);
}

static void rx_write(uint32_t psn, uint32_t off)
{
	const struct fx_hdrs h = { .psn = psn, .ackreq = true, .va = (uintptr_t)(fx.buf + off),
				   .rkey = fx.rkey, .dma_len = sizeof(payload) };

	fx_rx_build(ROCEMU_OP_RC_RDMA_WRITE_ONLY, &h, payload, sizeof(payload));
}

START_TEST(test_newer_ack_replaces)
{
	struct rocemu_qp *qp = fx_emu_qp();

	ck_assert(rocemu_rc_resp_may_wait(qp));
	ck_assert(rocemu_rc_ack_defer(qp, FX_RQ_PSN, ack_syndrome(), 1));
	ck_assert(rocemu_rc_ack_defer(qp, FX_RQ_PSN + 1, ack_syndrome(), 2));
	ck_assert_uint_eq(fx.nwire, 0);
	rocemu_rc_resp_settle(qp);
	ck_assert_uint_eq(fx.nwire, 1);
	expect_ack(0, FX_RQ_PSN + 1, ROCEMU_AETH_ACK, 0, 2);
	ck_assert(!qp->rc->resp.ack_deferred);
	/* Left: nothing more at the turn's end. */
	rocemu_rc_settle_all();
	rocemu_rc_resp_settle(qp);
	ck_assert_uint_eq(fx.nwire, 1);
}
END_TEST

/* A NAK that waits keeps its code. */
START_TEST(test_waiting_nak_keeps_its_code)
{
	ck_assert(rocemu_rc_ack_defer(fx_emu_qp(), FX_RQ_PSN + 3,
				      rocemu_aeth_syndrome_make(ROCEMU_AETH_NAK,
								ROCEMU_NAK_INVALID_REQUEST), 7));
	rocemu_rc_settle_all();
	ck_assert_uint_eq(fx.nwire, 1);
	expect_ack(0, FX_RQ_PSN + 3, ROCEMU_AETH_NAK, ROCEMU_NAK_INVALID_REQUEST, 7);
}
END_TEST

START_TEST(test_forgotten_ack_never_leaves)
{
	struct rocemu_qp *qp = fx_emu_qp();

	ck_assert(rocemu_rc_ack_defer(qp, FX_RQ_PSN, ack_syndrome(), 1));
	rocemu_rc_ack_forget(qp);
	ck_assert(!qp->rc->resp.ack_deferred);
	rocemu_rc_settle_all();
	ck_assert_uint_eq(fx.nwire, 0);
	/* Forgetting none is harmless. */
	rocemu_rc_ack_forget(qp);
	ck_assert_uint_eq(fx.nwire, 0);
}
END_TEST

/* A QP gone to ERR while its ACK waited sends none. */
START_TEST(test_no_ack_from_failed_qp)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };

	ck_assert(rocemu_rc_ack_defer(fx_emu_qp(), FX_RQ_PSN, ack_syndrome(), 1));
	ck_assert_int_eq(fx_qp_modify(&attr, IBV_QP_STATE), 0);
	rocemu_rc_settle_all();
	ck_assert_uint_eq(fx.nwire, 0);
}
END_TEST

/* A DCT's responder belongs to one connection at a time: its ACK leaves at once. */
START_TEST(test_dct_never_waits)
{
	struct rocemu_rc rc = { .resp.ack_psn = 0 };
	struct rocemu_qp dct = { .type = ROCEMU_QPT_DCT, .rc = &rc };

	ck_assert(!rocemu_rc_resp_may_wait(&dct));
	ck_assert(!rocemu_rc_ack_defer(&dct, FX_RQ_PSN, ack_syndrome(), 1));
	ck_assert(!rc.resp.ack_deferred);
	ck_assert_uint_eq(rc.resp.ack_psn, 0);
}
END_TEST

/* As many QPs wait as the table holds; the next one's ACK is to leave at once. */
START_TEST(test_waiting_qps_bounded)
{
	struct rocemu_qp *waiting = calloc(WAITING_QPS_MAX, sizeof(*waiting));
	unsigned int i;

	ck_assert_ptr_nonnull(waiting);
	for (i = 0; i < WAITING_QPS_MAX; i++) {
		waiting[i].type = IBV_QPT_RC;
		waiting[i].rc = calloc(1, sizeof(*waiting[i].rc));
		ck_assert_ptr_nonnull(waiting[i].rc);
		ck_assert(rocemu_rc_ack_defer(&waiting[i], i, ack_syndrome(), i));
	}
	ck_assert(!rocemu_rc_ack_defer(fx_emu_qp(), FX_RQ_PSN, ack_syndrome(), 1));
	ck_assert(!fx_emu_qp()->rc->resp.ack_deferred);
	/* One already waiting is still replaced. */
	ck_assert(rocemu_rc_ack_defer(&waiting[3], 100, ack_syndrome(), 100));
	ck_assert_uint_eq(waiting[3].rc->resp.ack_psn, 100);
	rocemu_rc_ack_forget(&waiting[0]);
	ck_assert(rocemu_rc_ack_defer(fx_emu_qp(), FX_RQ_PSN, ack_syndrome(), 1));
	for (i = 1; i < WAITING_QPS_MAX; i++) {
		rocemu_rc_ack_forget(&waiting[i]);
		free(waiting[i].rc);
	}
	free(waiting[0].rc);
	free(waiting);
	rocemu_rc_settle_all();
	ck_assert_uint_eq(fx.nwire, 1);
	expect_ack(0, FX_RQ_PSN, ROCEMU_AETH_ACK, 0, 1);
}
END_TEST

/* Two WRITEs and a SEND with no receive in one turn: one ACK for both WRITEs, then the RNR NAK. */
START_TEST(test_burst_ack_before_rnr_nak)
{
	const struct fx_hdrs h = { .psn = FX_RQ_PSN + 2, .ackreq = true };

	fx_rx_burst_begin();
	rx_write(FX_RQ_PSN, 0);
	rx_write(FX_RQ_PSN + 1, 1024);
	fx_rx_build(ROCEMU_OP_RC_SEND_ONLY, &h, payload, 8);
	fx_rx_burst_end();
	ck_assert_uint_eq(fx.nwire, 2);
	expect_ack(0, FX_RQ_PSN + 1, ROCEMU_AETH_ACK, 0, 2);
	expect_ack(1, FX_RQ_PSN + 2, ROCEMU_AETH_RNR_NAK, FX_MIN_RNR_TIMER, 2);
}
END_TEST

/* A PSN gap after a WRITE in one turn: the WRITE's ACK, then the sequence NAK at the expected PSN. */
START_TEST(test_burst_ack_before_sequence_nak)
{
	fx_rx_burst_begin();
	rx_write(FX_RQ_PSN, 0);
	rx_write(FX_RQ_PSN + 2, 1024);
	fx_rx_burst_end();
	ck_assert_uint_eq(fx.nwire, 2);
	expect_ack(0, FX_RQ_PSN, ROCEMU_AETH_ACK, 0, 1);
	expect_ack(1, FX_RQ_PSN + 1, ROCEMU_AETH_NAK, ROCEMU_NAK_PSN_SEQ_ERROR, 1);
	ck_assert_uint_eq(fx.dev->counters.out_of_sequence, 1);
}
END_TEST

static Suite *resp_ack_suite(void)
{
	Suite *s = suite_create("resp_ack");
	TCase *tc = tcase_create("resp_ack");

	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_add_test(tc, test_newer_ack_replaces);
	tcase_add_test(tc, test_waiting_nak_keeps_its_code);
	tcase_add_test(tc, test_forgotten_ack_never_leaves);
	tcase_add_test(tc, test_no_ack_from_failed_qp);
	tcase_add_test(tc, test_dct_never_waits);
	tcase_add_test(tc, test_waiting_qps_bounded);
	tcase_add_test(tc, test_burst_ack_before_rnr_nak);
	tcase_add_test(tc, test_burst_ack_before_sequence_nak);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return fx_suite_run(resp_ack_suite());
}
