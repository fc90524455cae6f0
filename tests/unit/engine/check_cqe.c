/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The CQE writer (emulator/mlx5/cqe.c, the mlx5 ring format) read back as the shim polls: the owner
 * bit flips each pass over the ring, requester, responder and error CQEs
 * carry their fields where mlx5 has them, data scattered to a CQE fills
 * its first 32 bytes, an overrun puts the CQ in error
 * for good (CQ_ERR once) and fails a QP completing into it, and an armed
 * CQ raises a completion event per its arm command, at once only for a CQE
 * no event reported before. A ring is not written through when it is made
 * or resized: its pages exist once CQEs reach them, and the entry at the
 * producer index never reads as the shim's.
 */
#include <check.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "emulator/mlx5/cqe.h"
#include "emulator/obj/cq.h"
#include "tests/unit/fixture.h"

/* Long enough for the timer, due at once, that fails a QP whose CQ refused a CQE. */
#define CQ_LOST_RUN_NS 1000000ull
#define CQ_DB_ARM 1

static const struct rocemu_cqe_info send_ok = {
	.kind = ROCEMU_CQE_SEND_DONE, .wqe_opcode = MLX5_OPCODE_SEND, .qpn = 0x123, .wqe_counter = 7,
};

static bool write_cqe(struct fx_cq *cq, const struct rocemu_cqe_info *info)
{
	return rocemu_cqe_write(fx_emu_cq(cq), info);
}

START_TEST(test_owner_bit_each_pass)
{
	uint32_t ncqe = fx.scq.layout.ncqe;
	struct mlx5_cqe64 cqe;

	ck_assert(!fx_poll(&fx.scq, &cqe));
	for (uint32_t i = 0; i < 3 * ncqe; i++) {
		struct rocemu_cqe_info info = send_ok;

		info.wqe_counter = (uint16_t)i;
		ck_assert(write_cqe(&fx.scq, &info));
		cqe = fx_expect_cqe(&fx.scq, MLX5_CQE_REQ, (uint16_t)i, 0);
		ck_assert_uint_eq(cqe.op_own & MLX5_CQE_OWNER_MASK, !!(i & ncqe));
		/* The slot after it still holds the last pass's CQE: not the shim's. */
		ck_assert(!fx_poll(&fx.scq, &cqe));
	}
}
END_TEST

/* Pages of the ring (its doorbell record's excepted) the memfd holds. */
static size_t ring_pages_resident(const struct fx_cq *cq)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), n = cq->layout.dbrec_offset / page, resident = 0;
	unsigned char *vec = calloc(n, 1);

	ck_assert_ptr_nonnull(vec);
	ck_assert_int_eq(mincore(cq->map, n * page, vec), 0);
	for (size_t i = 0; i < n; i++)
		resident += vec[i] & 1;
	free(vec);
	return resident;
}

/* The entry at cq's ci is hardware's by its owner bit alone, as UCX tells (and by its opcode). */
static void expect_next_hardware_owned(const struct fx_cq *cq)
{
	uint32_t ncqe = cq->layout.ncqe;
	const struct mlx5_cqe64 *cqe = (const struct mlx5_cqe64 *)cq->map + (cq->ci & (ncqe - 1));

	ck_assert_uint_eq(cqe->op_own >> 4, MLX5_CQE_INVALID);
	ck_assert_uint_ne(cqe->op_own & MLX5_CQE_OWNER_MASK, !!(cq->ci & ncqe));
}

/* cq at the shim's ci..pi: each CQE written is polled in order, and then none. */
static void write_and_poll(struct fx_cq *cq, uint32_t n)
{
	struct mlx5_cqe64 cqe;

	for (uint32_t i = 0; i < n; i++) {
		struct rocemu_cqe_info info = send_ok;

		info.wqe_counter = (uint16_t)i;
		ck_assert(write_cqe(cq, &info));
	}
	for (uint32_t i = 0; i < n; i++)
		fx_expect_cqe(cq, MLX5_CQE_REQ, (uint16_t)i, 0);
	ck_assert(!fx_poll(cq, &cqe));
	expect_next_hardware_owned(cq);
}

START_TEST(test_ring_untouched)
{
	struct rocemu_create_cq_req req = { .cqe = 65535, .channel = ROCEMU_NO_HANDLE };
	struct rocemu_resize_cq_req resize = { .cqe = 262143 };
	size_t per_page = (size_t)sysconf(_SC_PAGESIZE) / sizeof(struct mlx5_cqe64);
	struct mlx5_cqe64 cqe;
	struct fx_cq cq = { 0 };
	int fd;

	ck_assert_int_eq(rocemu_cq_create(fx.client, &req, &cq.layout, &fd), 0);
	cq.cqn = cq.layout.cqn;
	cq.map = mmap(NULL, cq.layout.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ck_assert_ptr_ne(cq.map, MAP_FAILED);
	close(fd);
	/* 4 MiB of CQEs, one page of them touched: the entry the shim polls first. */
	ck_assert_uint_eq(ring_pages_resident(&cq), 1);
	ck_assert(!fx_poll(&cq, &cqe));
	expect_next_hardware_owned(&cq);
	write_and_poll(&cq, (uint32_t)per_page);
	/* The page written, and the next one's first entry, which the shim polls next. */
	ck_assert_uint_eq(ring_pages_resident(&cq), 2);

	/* Unpolled CQEs move to a ring four times the size, which again starts untouched. */
	for (uint32_t i = 0; i < 3; i++)
		ck_assert(write_cqe(&cq, &send_ok));
	munmap(cq.map, cq.layout.size);
	resize.cqn = cq.cqn;
	ck_assert_int_eq(rocemu_cq_resize(fx.client, &resize, &cq.layout, &fd), 0);
	cq.map = mmap(NULL, cq.layout.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ck_assert_ptr_ne(cq.map, MAP_FAILED);
	close(fd);
	ck_assert_uint_le(ring_pages_resident(&cq), 2);
	for (uint32_t i = 0; i < 3; i++)
		fx_expect_cqe(&cq, MLX5_CQE_REQ, send_ok.wqe_counter, 0);
	ck_assert(!fx_poll(&cq, &cqe));
	expect_next_hardware_owned(&cq);
	write_and_poll(&cq, 2 * (uint32_t)per_page);
	munmap(cq.map, cq.layout.size);
}
END_TEST

START_TEST(test_cqe_fields)
{
	const struct rocemu_cqe_info recv = {
		.kind = ROCEMU_CQE_RECV_SEND_IMM, .qpn = 0x456, .wqe_counter = 3, .byte_cnt = 1000,
		.imm = htobe32(0xfeed), .src_qp = 0xabcdef,
	};
	const struct rocemu_cqe_info err = {
		.kind = ROCEMU_CQE_SEND_ERR, .status = IBV_WC_REM_ACCESS_ERR,
		.wqe_opcode = MLX5_OPCODE_RDMA_WRITE, .qpn = 0x789, .wqe_counter = 9,
	};
	struct mlx5_cqe64 cqe;
	const struct mlx5_err_cqe *e = (const void *)&cqe;

	ck_assert(write_cqe(&fx.scq, &send_ok));
	cqe = fx_expect_cqe(&fx.scq, MLX5_CQE_REQ, 7, 0);
	ck_assert_uint_eq(be32toh(cqe.sop_drop_qpn), (uint32_t)MLX5_OPCODE_SEND << 24 | 0x123);
	ck_assert(write_cqe(&fx.scq, &recv));
	cqe = fx_expect_cqe(&fx.scq, MLX5_CQE_RESP_SEND_IMM, 3, 0);
	ck_assert_uint_eq(be32toh(cqe.byte_cnt), 1000);
	ck_assert_uint_eq(be32toh(cqe.imm_inval_pkey), 0xfeed);
	ck_assert_uint_eq(be32toh(cqe.sop_drop_qpn), 0x456);
	ck_assert_uint_eq(be32toh(cqe.flags_rqpn), 0xabcdef);
	ck_assert(write_cqe(&fx.scq, &err));
	cqe = fx_expect_cqe(&fx.scq, MLX5_CQE_REQ_ERR, 9, MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR);
	ck_assert_uint_eq(be32toh(e->s_wqe_opcode_qpn),
			  (uint32_t)MLX5_OPCODE_RDMA_WRITE << 24 | 0x789);
}
END_TEST

/*
 * Through the device's format table, each kind of completion reads back
 * with its mlx5 opcode, and each error status with a syndrome the shim's
 * poll turns back into that status (rocemu_cqe_error_status).
 */
START_TEST(test_format_table_kinds)
{
	static const struct {
		enum rocemu_cqe_kind kind;
		uint8_t op;
	} kinds[] = {
		{ ROCEMU_CQE_SEND_DONE, MLX5_CQE_REQ },
		{ ROCEMU_CQE_RECV_SEND, MLX5_CQE_RESP_SEND },
		{ ROCEMU_CQE_RECV_SEND_IMM, MLX5_CQE_RESP_SEND_IMM },
		{ ROCEMU_CQE_RECV_SEND_INV, MLX5_CQE_RESP_SEND_INV },
		{ ROCEMU_CQE_RECV_WRITE_IMM, MLX5_CQE_RESP_WR_IMM },
	};
	static const enum ibv_wc_status errors[] = {
		IBV_WC_LOC_LEN_ERR, IBV_WC_LOC_QP_OP_ERR, IBV_WC_LOC_PROT_ERR,
		IBV_WC_WR_FLUSH_ERR, IBV_WC_MW_BIND_ERR, IBV_WC_REM_INV_REQ_ERR,
		IBV_WC_REM_ACCESS_ERR, IBV_WC_REM_OP_ERR, IBV_WC_RETRY_EXC_ERR,
		IBV_WC_RNR_RETRY_EXC_ERR,
	};
	struct rocemu_cq *cq = fx_emu_cq(&fx.rcq);
	const struct rocemu_ring_format *format = cq->owner->dev->format;
	uint16_t counter = 0;
	struct mlx5_cqe64 cqe;

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++, counter++) {
		const struct rocemu_cqe_info info = { .kind = kinds[i].kind, .qpn = 0x123,
						      .wqe_counter = counter, .byte_cnt = 8,
						      .grh_ipv4 = true };

		ck_assert(format->cqe_write(cq, &info));
		cqe = fx_expect_cqe(&fx.rcq, kinds[i].op, counter, 0);
		if (kinds[i].kind != ROCEMU_CQE_SEND_DONE)	/* IPv4 GRH, RoCEv2: the packet type */
			ck_assert_uint_eq(be32toh(cqe.flags_rqpn) >> 24,
					  MLX5_CQE_L3_HDR_TYPE_IPV4 << 4 | 0x8 | MLX5_CQE_L3_HDR_TYPE_IPV4);
	}
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++, counter++) {
		const struct rocemu_cqe_info info = { .kind = ROCEMU_CQE_RECV_ERR,
						      .status = errors[i], .qpn = 0x123,
						      .wqe_counter = counter };
		const struct mlx5_err_cqe *e = (const void *)&cqe;

		ck_assert(format->cqe_write(cq, &info));
		ck_assert(fx_poll(&fx.rcq, &cqe));
		ck_assert_uint_eq(mlx5dv_get_cqe_opcode(&cqe), MLX5_CQE_RESP_ERR);
		ck_assert_int_eq(rocemu_cqe_error_status(e->syndrome), errors[i]);
	}
}
END_TEST

/* Data carried in a 64-byte CQE fills its first 32 bytes, the fields after them kept. */
START_TEST(test_scatter_32)
{
	const uint8_t data[20] = "twenty bytes of data";
	const struct rocemu_cqe_info recv = {
		.kind = ROCEMU_CQE_RECV_SEND, .qpn = 0x456, .wqe_counter = 5, .byte_cnt = sizeof(data),
		.scatter = data, .scatter_len = sizeof(data),
	};
	struct rocemu_cqe_info err = {
		.kind = ROCEMU_CQE_RECV_ERR, .status = IBV_WC_LOC_LEN_ERR, .qpn = 0x456,
		.wqe_counter = 6, .scatter = data, .scatter_len = sizeof(data),
	};
	struct mlx5_cqe64 cqe;

	ck_assert(write_cqe(&fx.rcq, &recv));
	cqe = fx_expect_cqe(&fx.rcq, MLX5_CQE_RESP_SEND, 5, 0);
	ck_assert_uint_eq(cqe.op_own & (MLX5_INLINE_SCATTER_32 | MLX5_INLINE_SCATTER_64),
			  MLX5_INLINE_SCATTER_32);
	ck_assert_mem_eq(&cqe, data, sizeof(data));
	ck_assert_uint_eq(be32toh(cqe.byte_cnt), sizeof(data));
	ck_assert_uint_eq(be32toh(cqe.sop_drop_qpn), 0x456);
	/* An error CQE carries no data, whatever it is given. */
	ck_assert(write_cqe(&fx.rcq, &err));
	cqe = fx_expect_cqe(&fx.rcq, MLX5_CQE_RESP_ERR, 6, MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR);
	ck_assert_uint_eq(cqe.op_own & (MLX5_INLINE_SCATTER_32 | MLX5_INLINE_SCATTER_64), 0);
}
END_TEST

/* ncqe CQEs fill the ring; the next one overruns it, and the CQ stays in error. */
START_TEST(test_overrun_puts_cq_in_error)
{
	uint32_t ncqe = fx.scq.layout.ncqe;
	struct rocemu_async_record ev;
	struct mlx5_cqe64 cqe;

	for (uint32_t i = 0; i < ncqe; i++)
		ck_assert(write_cqe(&fx.scq, &send_ok));
	ck_assert(!fx_async_event(&ev));
	ck_assert(!write_cqe(&fx.scq, &send_ok));
	ck_assert(fx_async_event(&ev));
	ck_assert_uint_eq(ev.element, FX_USER_CQ);
	ck_assert_uint_eq(ev.event_type, IBV_EVENT_CQ_ERR);
	/* Polling makes room, but a CQ in error takes no CQE and reports once. */
	for (uint32_t i = 0; i < ncqe; i++)
		ck_assert(fx_poll(&fx.scq, &cqe));
	ck_assert(!write_cqe(&fx.scq, &send_ok));
	ck_assert(!fx_async_event(&ev));
}
END_TEST

/* A QP whose CQ refused a CQE fails (QP_FATAL) once the engines' pass is over. */
START_TEST(test_overrun_fails_qp)
{
	const struct ibv_sge sge = { .addr = (uintptr_t)fx.buf, .length = 8, .lkey = fx.lkey };
	const struct fx_wr wr = { .opcode = MLX5_OPCODE_SEND, .flags = MLX5_WQE_CTRL_CQ_UPDATE,
				  .sge = &sge, .num_sge = 1 };
	struct rocemu_async_record ev;

	for (uint32_t i = 0; i < fx.scq.layout.ncqe; i++)
		ck_assert(write_cqe(&fx.scq, &send_ok));
	fx_post_send(&wr);
	fx_doorbell();
	fx_rx_ack(FX_SQ_PSN, rocemu_aeth_syndrome_make(ROCEMU_AETH_ACK, 0), 1);
	ck_assert(fx_async_event(&ev));
	ck_assert_uint_eq(ev.event_type, IBV_EVENT_CQ_ERR);
	ck_assert_int_eq(fx_qp_state(), IBV_QPS_RTS);
	fx_run(CQ_LOST_RUN_NS);
	fx_expect_qp_error(IBV_EVENT_QP_FATAL);
}
END_TEST

/* Armed for solicited CQEs only: a plain one raises no event, a solicited one does. */
START_TEST(test_arm_solicited)
{
	struct fx_cq cq;
	struct rocemu_cqe_info info = {
		.kind = ROCEMU_CQE_RECV_SEND, .qpn = 0x123, .byte_cnt = 4,
	};
	__be32 *dbrec;
	uint64_t user_cq;
	int ch;

	fx_cq_create(&cq, &ch);
	ck_assert_int_eq(fcntl(ch, F_SETFL, O_NONBLOCK), 0);
	dbrec = (__be32 *)(cq.map + cq.layout.dbrec_offset);
	/* ibv_req_notify_cq(solicited_only): sequence 1, REQ_NOT_SOL, consumer index 0. */
	__atomic_store_n(&dbrec[CQ_DB_ARM], htobe32(1u << 28 | MLX5_CQ_DB_REQ_NOT_SOL),
			 __ATOMIC_RELEASE);
	ck_assert(write_cqe(&cq, &info));
	ck_assert_int_eq(read(ch, &user_cq, sizeof(user_cq)), -1);
	info.solicited = true;
	ck_assert(write_cqe(&cq, &info));
	ck_assert_int_eq(read(ch, &user_cq, sizeof(user_cq)), sizeof(user_cq));
	ck_assert_uint_eq(user_cq, FX_USER_CQ);
	/* One event per arm. */
	ck_assert(write_cqe(&cq, &info));
	ck_assert_int_eq(read(ch, &user_cq, sizeof(user_cq)), -1);
	close(ch);
	munmap(cq.map, cq.layout.size);
}
END_TEST

/* The arm word as mlx5_arm_cq writes it into the doorbell record. */
static void arm_word(struct fx_cq *cq, uint32_t sn, bool solicited_only)
{
	__be32 *dbrec = (__be32 *)(cq->map + cq->layout.dbrec_offset);

	__atomic_store_n(&dbrec[CQ_DB_ARM],
			 htobe32(sn << 28 | (solicited_only ? MLX5_CQ_DB_REQ_NOT_SOL : MLX5_CQ_DB_REQ_NOT) |
				 (cq->ci & 0xffffff)), __ATOMIC_RELEASE);
	rocemu_cqe_arm_check(fx_emu_cq(cq));
}

static bool event(int ch)
{
	uint64_t user_cq;
	ssize_t n = read(ch, &user_cq, sizeof(user_cq));

	ck_assert(n == -1 || (n == sizeof(user_cq) && user_cq == FX_USER_CQ));
	return n == sizeof(user_cq);
}

/*
 * An arm owes an event at once only for a CQE at or past its consumer
 * index that no event reported: the CQE of the last event, unpolled, raises
 * none; one written while the CQ was not armed does; with all polled, the
 * next CQE does.
 */
START_TEST(test_arm_unpolled)
{
	struct mlx5_cqe64 cqe;
	struct fx_cq cq;
	int ch;

	fx_cq_create(&cq, &ch);
	ck_assert_int_eq(fcntl(ch, F_SETFL, O_NONBLOCK), 0);
	ck_assert(write_cqe(&cq, &send_ok));
	ck_assert(!event(ch));			/* never armed */
	arm_word(&cq, 1, false);
	ck_assert(event(ch));			/* written before the arm, unpolled */
	arm_word(&cq, 2, false);
	ck_assert(!event(ch));			/* its event reported it */
	ck_assert(write_cqe(&cq, &send_ok));
	ck_assert(event(ch));
	ck_assert(write_cqe(&cq, &send_ok));	/* after the event, before the next arm */
	arm_word(&cq, 3, false);
	ck_assert(event(ch));
	arm_word(&cq, 0, false);
	ck_assert(!event(ch));
	for (int i = 0; i < 3; i++)
		ck_assert(fx_poll(&cq, &cqe));
	ck_assert(write_cqe(&cq, &send_ok));	/* armed, with all polled before it */
	ck_assert(event(ch));
	ck_assert(fx_poll(&cq, &cqe));
	/* An arm at the consumer index of a CQ whose CQEs were all polled: the next one. */
	arm_word(&cq, 1, false);
	ck_assert(!event(ch));
	ck_assert(write_cqe(&cq, &send_ok));
	ck_assert(event(ch));
	close(ch);
	munmap(cq.map, cq.layout.size);
}
END_TEST

/* Armed for solicited CQEs with CQEs unpolled: an event at once only for an unreported solicited one. */
START_TEST(test_arm_solicited_unpolled)
{
	struct rocemu_cqe_info plain = { .kind = ROCEMU_CQE_RECV_SEND, .qpn = 0x123, .byte_cnt = 4 };
	struct rocemu_cqe_info solicited = plain;
	struct fx_cq cq;
	int ch;

	solicited.solicited = true;
	fx_cq_create(&cq, &ch);
	ck_assert_int_eq(fcntl(ch, F_SETFL, O_NONBLOCK), 0);
	ck_assert(write_cqe(&cq, &plain));
	arm_word(&cq, 1, true);
	ck_assert(!event(ch));
	ck_assert(write_cqe(&cq, &solicited));
	ck_assert(event(ch));
	ck_assert(write_cqe(&cq, &solicited));	/* after the event, before the next arm */
	ck_assert(write_cqe(&cq, &plain));
	arm_word(&cq, 2, true);
	ck_assert(event(ch));
	arm_word(&cq, 3, true);
	ck_assert(!event(ch));			/* reported, though unpolled */
	/* Armed for every CQE, none is unreported: nothing either. */
	arm_word(&cq, 3, false);
	ck_assert(!event(ch));
	close(ch);
	munmap(cq.map, cq.layout.size);
}
END_TEST

static Suite *cqe_suite(void)
{
	Suite *s = suite_create("cqe");
	TCase *tc = tcase_create("cqe");

	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_add_test(tc, test_owner_bit_each_pass);
	tcase_add_test(tc, test_ring_untouched);
	tcase_add_test(tc, test_cqe_fields);
	tcase_add_test(tc, test_format_table_kinds);
	tcase_add_test(tc, test_scatter_32);
	tcase_add_test(tc, test_overrun_puts_cq_in_error);
	tcase_add_test(tc, test_overrun_fails_qp);
	tcase_add_test(tc, test_arm_solicited);
	tcase_add_test(tc, test_arm_unpolled);
	tcase_add_test(tc, test_arm_solicited_unpolled);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return fx_suite_run(cqe_suite());
}
