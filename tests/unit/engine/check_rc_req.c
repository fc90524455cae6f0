/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The RC requester (emulator/rc/rc_req.c) on the fake wire: WQEs in the SQ
 * ring in, packets out. Segmentation by the path MTU with consecutive
 * PSNs, the opcode by position, RETH on the first packet only, AckReq on
 * the last (and every 64th), the PSN range of a READ, READ credits,
 * fences and local errors, also within WQEs of one doorbell sent together.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include "tests/unit/fixture.h"

/* The payload reads the device makes (of /proc/PID/mem): this test links with --wrap=preadv. */
static unsigned int payload_reads;
ssize_t __real_preadv(int fd, const struct iovec *iov, int iovcnt, off_t offset);
ssize_t __wrap_preadv(int fd, const struct iovec *iov, int iovcnt, off_t offset);

ssize_t __wrap_preadv(int fd, const struct iovec *iov, int iovcnt, off_t offset)
{
	payload_reads++;
	return __real_preadv(fd, iov, iovcnt, offset);
}

static void fill(uint8_t *p, size_t len, uint8_t seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seed + i * 7);
}

static uint16_t post_sgl(uint8_t opcode, uint8_t flags, uint32_t offset, uint32_t len,
			 uint64_t raddr, uint32_t rkey)
{
	const struct ibv_sge sge = { .addr = (uintptr_t)(fx.buf + offset), .length = len,
				     .lkey = fx.lkey };
	const struct fx_wr wr = { .opcode = opcode, .flags = flags, .raddr = raddr, .rkey = rkey,
				  .sge = &sge, .num_sge = 1 };

	return fx_post_send(&wr);
}

static void expect_payload(unsigned int i, const uint8_t *want)
{
	const uint8_t *bth = fx_wire_bth(i);

	ck_assert_mem_eq(bth + rocemu_pkt_info(bth)->length, want, fx_wire_paylen(i));
}

START_TEST(test_send_three_mtus)
{
	fill(fx.buf, 3 * FX_MTU_BYTES, 1);
	post_sgl(MLX5_OPCODE_SEND, MLX5_WQE_CTRL_CQ_UPDATE, 0, 3 * FX_MTU_BYTES, 0, 0);
	fx_doorbell();
	ck_assert_uint_eq(fx.nwire, 3);
	fx_wire_expect(0, ROCEMU_OP_RC_SEND_FIRST, FX_SQ_PSN, false, FX_MTU_BYTES);
	fx_wire_expect(1, ROCEMU_OP_RC_SEND_MIDDLE, FX_SQ_PSN + 1, false, FX_MTU_BYTES);
	fx_wire_expect(2, ROCEMU_OP_RC_SEND_LAST, FX_SQ_PSN + 2, true, FX_MTU_BYTES);
	for (unsigned int i = 0; i < 3; i++)
		expect_payload(i, fx.buf + i * FX_MTU_BYTES);
}
END_TEST

START_TEST(test_send_short_last_padded)
{
	const uint8_t *bth;

	fill(fx.buf, 2 * FX_MTU_BYTES + 1, 2);
	post_sgl(MLX5_OPCODE_SEND, 0, 0, 2 * FX_MTU_BYTES + 1, 0, 0);
	fx_doorbell();
	ck_assert_uint_eq(fx.nwire, 3);
	fx_wire_expect(1, ROCEMU_OP_RC_SEND_MIDDLE, FX_SQ_PSN + 1, false, FX_MTU_BYTES);
	bth = fx_wire_expect(2, ROCEMU_OP_RC_SEND_LAST, FX_SQ_PSN + 2, true, 1);
	ck_assert_uint_eq(rocemu_bth_padcnt(bth), 3);
	expect_payload(2, fx.buf + 2 * FX_MTU_BYTES);
}
END_TEST

START_TEST(test_write_reth_on_first_only)
{
	const uint64_t raddr = 0x7000100000ull;
	const uint8_t *bth;

	fill(fx.buf, 2 * FX_MTU_BYTES, 3);
	post_sgl(MLX5_OPCODE_RDMA_WRITE, 0, 0, 2 * FX_MTU_BYTES, raddr, 0x1234);
	fx_doorbell();
	ck_assert_uint_eq(fx.nwire, 2);
	bth = fx_wire_expect(0, ROCEMU_OP_RC_RDMA_WRITE_FIRST, FX_SQ_PSN, false, FX_MTU_BYTES);
	ck_assert_uint_eq(rocemu_reth_va(rocemu_pkt_reth((uint8_t *)bth)), raddr);
	ck_assert_uint_eq(rocemu_reth_rkey(rocemu_pkt_reth((uint8_t *)bth)), 0x1234);
	ck_assert_uint_eq(rocemu_reth_dma_len(rocemu_pkt_reth((uint8_t *)bth)), 2 * FX_MTU_BYTES);
	bth = fx_wire_expect(1, ROCEMU_OP_RC_RDMA_WRITE_LAST, FX_SQ_PSN + 1, true, FX_MTU_BYTES);
	ck_assert_ptr_null(rocemu_pkt_reth((uint8_t *)bth));
	expect_payload(1, fx.buf + FX_MTU_BYTES);
}
END_TEST

START_TEST(test_ackreq_every_64)
{
	const uint32_t npkts = 65;

	post_sgl(MLX5_OPCODE_RDMA_WRITE, 0, 0, npkts * FX_MTU_BYTES, 0x1000, 1);
	fx_doorbell();
	ck_assert_uint_eq(fx.nwire, npkts);
	for (uint32_t i = 0; i < npkts; i++)
		ck_assert_msg(rocemu_bth_ackreq(fx_wire_bth(i)) == (i == 63 || i == npkts - 1),
			      "packet %u", i);
}
END_TEST

START_TEST(test_read_takes_its_psn_range)
{
	const uint8_t *bth;

	post_sgl(MLX5_OPCODE_RDMA_READ, 0, 0, 3 * FX_MTU_BYTES - 100, 0x2000, 0x99);
	post_sgl(MLX5_OPCODE_SEND, 0, 0, 10, 0, 0);
	fx_doorbell();
	ck_assert_uint_eq(fx.nwire, 2);
	/* One request for the whole READ; its responses take 3 PSNs. */
	bth = fx_wire_expect(0, ROCEMU_OP_RC_RDMA_READ_REQUEST, FX_SQ_PSN, true, 0);
	ck_assert_uint_eq(rocemu_reth_dma_len(rocemu_pkt_reth((uint8_t *)bth)),
			  3 * FX_MTU_BYTES - 100);
	fx_wire_expect(1, ROCEMU_OP_RC_SEND_ONLY, FX_SQ_PSN + 3, true, 10);
}
END_TEST

START_TEST(test_inline_send)
{
	static const char text[] = "inline";
	const struct fx_wr wr = { .opcode = MLX5_OPCODE_SEND, .inline_data = text,
				  .inline_len = sizeof(text) - 1 };
	const uint8_t *bth;

	fx_post_send(&wr);
	fx_doorbell();
	ck_assert_uint_eq(fx.nwire, 1);
	bth = fx_wire_expect(0, ROCEMU_OP_RC_SEND_ONLY, FX_SQ_PSN, true, sizeof(text) - 1);
	ck_assert_uint_eq(rocemu_bth_padcnt(bth), 2);
	expect_payload(0, (const uint8_t *)text);
}
END_TEST

/* The peer's whole answer to an 8-byte READ at psn. */
static void rx_read_response_8(uint32_t psn)
{
	const struct fx_hdrs h = { .psn = psn,
				   .syndrome = rocemu_aeth_syndrome_make(ROCEMU_AETH_ACK, 31),
				   .msn = 1 };
	const uint8_t data[8] = { 0 };

	fx_rx_build(ROCEMU_OP_RC_RDMA_READ_RESPONSE_ONLY, &h, data, sizeof(data));
}

/* max_rd_atomic (4 here) READs in flight; the fifth waits for a response. */
START_TEST(test_read_credits)
{
	for (int i = 0; i < 5; i++)
		post_sgl(MLX5_OPCODE_RDMA_READ, 0, (uint32_t)i * 8, 8, 0x3000, 0x42);
	fx_doorbell();
	ck_assert_uint_eq(fx.nwire, 4);
	fx_wire_clear();
	rx_read_response_8(FX_SQ_PSN);
	ck_assert_uint_eq(fx.nwire, 1);
	fx_wire_expect(0, ROCEMU_OP_RC_RDMA_READ_REQUEST, FX_SQ_PSN + 4, true, 0);
}
END_TEST

/* IBTA 10.8.3.3: a fenced WQE waits until the READ before it completed. */
START_TEST(test_fence_waits_for_read)
{
	post_sgl(MLX5_OPCODE_RDMA_READ, 0, 0, 8, 0x3000, 0x42);
	post_sgl(MLX5_OPCODE_SEND, MLX5_WQE_CTRL_FENCE, 64, 8, 0, 0);
	fx_doorbell();
	ck_assert_uint_eq(fx.nwire, 1);
	rx_read_response_8(FX_SQ_PSN);
	ck_assert_uint_eq(fx.nwire, 2);
	fx_wire_expect(1, ROCEMU_OP_RC_SEND_ONLY, FX_SQ_PSN + 1, true, 8);
}
END_TEST

/* A bad lkey is found before anything is sent: error CQE, QP in ERR, QP_FATAL. */
START_TEST(test_bad_lkey_fails_locally)
{
	const struct ibv_sge sge = { .addr = (uintptr_t)fx.buf, .length = 16,
				     .lkey = fx.lkey ^ 0x100 };
	const struct fx_wr wr = { .opcode = MLX5_OPCODE_SEND, .sge = &sge, .num_sge = 1 };
	uint16_t counter;

	counter = fx_post_send(&wr);
	post_sgl(MLX5_OPCODE_SEND, MLX5_WQE_CTRL_CQ_UPDATE, 0, 16, 0, 0);
	fx_doorbell();
	ck_assert_uint_eq(fx.nwire, 0);
	fx_expect_cqe(&fx.scq, MLX5_CQE_REQ_ERR, counter, MLX5_CQE_SYNDROME_LOCAL_PROT_ERR);
	fx_expect_cqe(&fx.scq, MLX5_CQE_REQ_ERR, counter + 1, MLX5_CQE_SYNDROME_WR_FLUSH_ERR);
	fx_expect_qp_error(IBV_EVENT_QP_FATAL);
}
END_TEST

/* The small SENDs of one doorbell (one inline) have their payloads read at once. */
START_TEST(test_one_read_for_a_doorbell)
{
	static const char text[] = "inline";
	const struct fx_wr inl = { .opcode = MLX5_OPCODE_SEND, .inline_data = text,
				   .inline_len = sizeof(text) - 1 };

	/* The payloads one after the other in memory: one run of the address space to read. */
	fill(fx.buf, 7 * 64, 5);
	for (uint32_t i = 0; i < 8; i++) {
		if (i == 2)
			fx_post_send(&inl);
		else
			post_sgl(MLX5_OPCODE_SEND, 0, (i - (i > 2)) * 64, 64, 0, 0);
	}
	payload_reads = 0;
	fx_doorbell();
	ck_assert_uint_eq(fx.nwire, 8);
	for (uint32_t i = 0; i < 8; i++) {
		fx_wire_expect(i, ROCEMU_OP_RC_SEND_ONLY, FX_SQ_PSN + i, true,
			       i == 2 ? sizeof(text) - 1 : 64);
		expect_payload(i, i == 2 ? (const uint8_t *)text : fx.buf + (i - (i > 2)) * 64);
	}
	ck_assert_uint_eq(payload_reads, 1);
}
END_TEST

/* WQEs of one doorbell leave in order around a READ, which ends a shared payload read. */
START_TEST(test_messages_in_order_around_read)
{
	fill(fx.buf, 512, 3);
	post_sgl(MLX5_OPCODE_SEND, 0, 0, 64, 0, 0);
	post_sgl(MLX5_OPCODE_RDMA_WRITE, 0, 64, 100, 0x4000, 0x42);
	post_sgl(MLX5_OPCODE_RDMA_READ, 0, 1024, 8, 0x3000, 0x42);
	post_sgl(MLX5_OPCODE_SEND, 0, 256, 32, 0, 0);
	fx_doorbell();
	ck_assert_uint_eq(fx.nwire, 4);
	fx_wire_expect(0, ROCEMU_OP_RC_SEND_ONLY, FX_SQ_PSN, true, 64);
	expect_payload(0, fx.buf);
	fx_wire_expect(1, ROCEMU_OP_RC_RDMA_WRITE_ONLY, FX_SQ_PSN + 1, true, 100);
	expect_payload(1, fx.buf + 64);
	fx_wire_expect(2, ROCEMU_OP_RC_RDMA_READ_REQUEST, FX_SQ_PSN + 2, true, 0);
	fx_wire_expect(3, ROCEMU_OP_RC_SEND_ONLY, FX_SQ_PSN + 3, true, 32);
	expect_payload(3, fx.buf + 256);
}
END_TEST

/*
 * One doorbell, the fourth WQE's source unmapped after registration: the
 * three before it leave (one inline), it fails with a local protection
 * error, those around it are flushed, and nothing after it leaves.
 */
START_TEST(test_unreadable_source_in_a_list)
{
	static const char text[] = "inline";
	const struct fx_wr inl = { .opcode = MLX5_OPCODE_SEND, .flags = MLX5_WQE_CTRL_CQ_UPDATE,
				   .inline_data = text, .inline_len = sizeof(text) - 1 };
	uint8_t *hole = fx.buf + FX_BUF_BYTES / 2;
	uint16_t first;

	fill(fx.buf, 512, 4);
	ck_assert_int_eq(munmap(hole, 4096), 0);
	first = post_sgl(MLX5_OPCODE_SEND, MLX5_WQE_CTRL_CQ_UPDATE, 0, 64, 0, 0);
	fx_post_send(&inl);
	post_sgl(MLX5_OPCODE_RDMA_WRITE, MLX5_WQE_CTRL_CQ_UPDATE, 128, 64, 0x4000, 0x42);
	post_sgl(MLX5_OPCODE_SEND, MLX5_WQE_CTRL_CQ_UPDATE, FX_BUF_BYTES / 2, 64, 0, 0);
	post_sgl(MLX5_OPCODE_SEND, MLX5_WQE_CTRL_CQ_UPDATE, 256, 64, 0, 0);
	fx_doorbell();
	ck_assert_uint_eq(fx.nwire, 3);
	fx_wire_expect(0, ROCEMU_OP_RC_SEND_ONLY, FX_SQ_PSN, true, 64);
	expect_payload(0, fx.buf);
	fx_wire_expect(1, ROCEMU_OP_RC_SEND_ONLY, FX_SQ_PSN + 1, true, sizeof(text) - 1);
	expect_payload(1, (const uint8_t *)text);
	fx_wire_expect(2, ROCEMU_OP_RC_RDMA_WRITE_ONLY, FX_SQ_PSN + 2, true, 64);
	expect_payload(2, fx.buf + 128);
	for (uint16_t i = 0; i < 5; i++)
		fx_expect_cqe(&fx.scq, MLX5_CQE_REQ_ERR, (uint16_t)(first + i),
			      i == 3 ? MLX5_CQE_SYNDROME_LOCAL_PROT_ERR : MLX5_CQE_SYNDROME_WR_FLUSH_ERR);
	fx_expect_qp_error(IBV_EVENT_QP_FATAL);
}
END_TEST

static Suite *rc_req_suite(void)
{
	Suite *s = suite_create("rc_req");
	TCase *tc = tcase_create("rc_req");

	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_add_test(tc, test_send_three_mtus);
	tcase_add_test(tc, test_send_short_last_padded);
	tcase_add_test(tc, test_write_reth_on_first_only);
	tcase_add_test(tc, test_ackreq_every_64);
	tcase_add_test(tc, test_read_takes_its_psn_range);
	tcase_add_test(tc, test_inline_send);
	tcase_add_test(tc, test_read_credits);
	tcase_add_test(tc, test_fence_waits_for_read);
	tcase_add_test(tc, test_bad_lkey_fails_locally);
	tcase_add_test(tc, test_one_read_for_a_doorbell);
	tcase_add_test(tc, test_messages_in_order_around_read);
	tcase_add_test(tc, test_unreadable_source_in_a_list);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return fx_suite_run(rc_req_suite());
}
