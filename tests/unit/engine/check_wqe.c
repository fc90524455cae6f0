/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The WQE parser (emulator/mlx5/wqe.c, the mlx5 ring format) on the rings the fixture writes as the
 * shim does: send WQEs with raddr, atomic, data and inline segments
 * (wrapping past the ring's end, an inline header before data pointers as
 * UCX writes it, gathered by wqe_gather.c), receive WQEs, and every way a send WQE
 * can be malformed; a malformed WQE posted fails the QP with a local QP
 * operation error.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emulator/mlx5/format.h"
#include "emulator/mlx5/wqe.h"
#include "emulator/engine/wqe_gather.h"
#include "emulator/obj/qp.h"
#include "tests/unit/fixture.h"

static struct rocemu_send_wqe w;

/* A ctrl segment at BB bb as a broken shim might write it. */
static void ctrl_write(uint32_t bb, uint8_t opcode, uint32_t qpn, uint32_t ds)
{
	struct mlx5_wqe_ctrl_seg *ctrl = fx_sq_seg(bb, 0);

	memset(ctrl, 0, sizeof(*ctrl));
	ctrl->opmod_idx_opcode = htobe32((bb & 0xffff) << 8 | opcode);
	ctrl->qpn_ds = htobe32(qpn << 8 | ds);
}

/* Parse at bb as if the whole ring were posted from there. */
static int parse(uint32_t bb)
{
	return rocemu_wqe_parse_send(fx_emu_qp(), bb, fx.qp.layout.sq_wqe_cnt, &w);
}

START_TEST(test_write_with_sgl)
{
	const struct ibv_sge sge[3] = {
		{ .addr = 0x1000, .length = 100, .lkey = 0x101 },
		{ .addr = 0x2000, .length = 0, .lkey = 0x102 },	/* skipped */
		{ .addr = 0x3000, .length = 300, .lkey = 0x103 },
	};
	const struct fx_wr wr = { .opcode = MLX5_OPCODE_RDMA_WRITE_IMM,
				  .flags = MLX5_WQE_CTRL_CQ_UPDATE | MLX5_WQE_CTRL_SOLICITED,
				  .imm = htobe32(0xabcd), .raddr = 0x123456789ull, .rkey = 0x4242,
				  .sge = sge, .num_sge = 3 };
	uint16_t counter = fx_post_send(&wr);

	ck_assert_int_eq(parse(0), 0);
	ck_assert_uint_eq(w.opcode, MLX5_OPCODE_RDMA_WRITE_IMM);
	ck_assert_uint_eq(w.wqe_counter, counter);
	ck_assert(w.signaled && w.solicited && !w.fence);
	ck_assert_uint_eq(be32toh(w.imm), 0xabcd);
	ck_assert_uint_eq(w.raddr, 0x123456789ull);
	ck_assert_uint_eq(w.rkey, 0x4242);
	ck_assert_uint_eq(w.bbs, 2);	/* ctrl, raddr and 3 data segments: 80 bytes */
	ck_assert_uint_eq(w.inline_len, 0);
	ck_assert_uint_eq(w.num_sge, 2);
	ck_assert_uint_eq(w.length, 400);
	ck_assert_uint_eq(w.sge[0].addr, 0x1000);
	ck_assert_uint_eq(w.sge[0].key, 0x101);
	ck_assert_uint_eq(w.sge[1].addr, 0x3000);
	ck_assert_uint_eq(w.sge[1].length, 300);
}
END_TEST

/* The engines' way in: the device's format table is mlx5's and parses the same WQE. */
START_TEST(test_format_table_parse)
{
	const struct ibv_sge sge = { .addr = 0x1000, .length = 64, .lkey = 0x101 };
	const struct fx_wr wr = { .opcode = MLX5_OPCODE_SEND, .flags = MLX5_WQE_CTRL_FENCE,
				  .sge = &sge, .num_sge = 1 };
	struct rocemu_qp *qp = fx_emu_qp();
	const struct rocemu_ring_format *format = qp->owner->dev->format;
	uint16_t counter = fx_post_send(&wr);

	ck_assert_ptr_eq(format, &rocemu_ring_mlx5);
	ck_assert_int_eq(format->parse_send(qp, 0, fx.qp.layout.sq_wqe_cnt, &w), 0);
	ck_assert_uint_eq(w.opcode, MLX5_OPCODE_SEND);
	ck_assert_uint_eq(w.wqe_counter, counter);
	ck_assert(!w.signaled && !w.solicited && w.fence && !w.umr);
	ck_assert_uint_eq(w.length, 64);
	ck_assert_uint_eq(w.num_sge, 1);
	ck_assert_uint_eq(w.sge[0].key, 0x101);
}
END_TEST

START_TEST(test_compare_swap)
{
	const struct ibv_sge sge = { .addr = 0x1000, .length = 8, .lkey = 0x101 };
	const struct fx_wr wr = { .opcode = MLX5_OPCODE_ATOMIC_CS, .raddr = 0x8000, .rkey = 7,
				  .swap_add = 0x1111, .compare = 0x2222, .sge = &sge,
				  .num_sge = 1 };

	fx_post_send(&wr);
	ck_assert_int_eq(parse(0), 0);
	ck_assert_uint_eq(w.swap_add, 0x1111);
	ck_assert_uint_eq(w.compare, 0x2222);
	ck_assert_uint_eq(w.raddr, 0x8000);
	ck_assert_uint_eq(w.length, 8);
}
END_TEST

/* A WQE in the ring's last BB goes on in BB 0. */
START_TEST(test_inline_wraps_past_ring_end)
{
	uint8_t text[60];
	const struct fx_wr wr = { .opcode = MLX5_OPCODE_SEND, .inline_data = text,
				  .inline_len = sizeof(text) };
	uint32_t last = fx.qp.layout.sq_wqe_cnt - 1;

	for (size_t i = 0; i < sizeof(text); i++)
		text[i] = (uint8_t)(i + 1);
	fx.qp.sq_cur = last;
	fx_post_send(&wr);
	ck_assert_int_eq(parse(last), 0);
	ck_assert_uint_eq(w.bbs, 2);
	ck_assert_uint_eq(w.inline_len, sizeof(text));
	ck_assert_uint_eq(w.length, sizeof(text));
	ck_assert_mem_eq(w.inline_data, text, sizeof(text));
}
END_TEST

/* An inline segment at seg of BB 0 holding len bytes of data. */
static void inline_seg_write(unsigned int seg, const void *data, uint32_t len)
{
	uint32_t count = htobe32(MLX5_INLINE_SEG | len);

	memcpy(fx_sq_seg(0, seg), &count, sizeof(count));
	memcpy((uint8_t *)fx_sq_seg(0, seg) + sizeof(count), data, len);
}

/* UCX's layout: a header inline, then the data behind a pointer; gathered in that order. */
START_TEST(test_inline_then_pointer)
{
	static const char hdr[10] = "0123456789";
	uint8_t out[sizeof(hdr) + 100], part[20];
	const struct iovec whole[2] = { { out, 7 }, { out + 7, sizeof(out) - 7 } };
	const struct iovec window = { part, sizeof(part) };

	for (size_t i = 0; i < 100; i++)
		fx.buf[i] = (uint8_t)(0x40 + i);
	ctrl_write(0, MLX5_OPCODE_SEND, fx.qp.qpn, 3);
	inline_seg_write(1, hdr, sizeof(hdr));	/* 4 + 10 bytes: one segment */
	mlx5dv_set_data_seg(fx_sq_seg(0, 2), 100, fx.lkey, (uintptr_t)fx.buf);
	ck_assert_int_eq(parse(0), 0);
	ck_assert_uint_eq(w.inline_len, sizeof(hdr));
	ck_assert_uint_eq(w.num_sge, 1);
	ck_assert_uint_eq(w.length, sizeof(hdr) + 100);
	ck_assert_int_eq(rocemu_wqe_gather(fx_emu_qp(), &w, 0, sizeof(out), whole, 2), 0);
	ck_assert_mem_eq(out, hdr, sizeof(hdr));
	ck_assert_mem_eq(out + sizeof(hdr), fx.buf, 100);
	/* A packet's window that starts inside the header. */
	ck_assert_int_eq(rocemu_wqe_gather(fx_emu_qp(), &w, 5, sizeof(part), &window, 1), 0);
	ck_assert_mem_eq(part, hdr + 5, 5);
	ck_assert_mem_eq(part + 5, fx.buf, sizeof(part) - 5);
}
END_TEST

START_TEST(test_reject_inline_after_pointer)
{
	ctrl_write(0, MLX5_OPCODE_SEND, fx.qp.qpn, 3);
	mlx5dv_set_data_seg(fx_sq_seg(0, 1), 100, fx.lkey, (uintptr_t)fx.buf);
	inline_seg_write(2, "abc", 3);
	ck_assert_int_eq(parse(0), -EINVAL);
}
END_TEST

START_TEST(test_reject_no_segments)
{
	ctrl_write(0, MLX5_OPCODE_SEND, fx.qp.qpn, 0);
	ck_assert_int_eq(parse(0), -EINVAL);
}
END_TEST

/* A doorbell written on a QP created with max_send_wr 0 reads nothing (no ring to mask into). */
START_TEST(test_reject_without_send_queue)
{
	struct rocemu_qp *qp = fx_emu_qp();
	uint32_t wqe_cnt = qp->layout.sq_wqe_cnt;

	qp->layout.sq_wqe_cnt = 0;
	ck_assert_int_eq(rocemu_wqe_parse_send(qp, 0xfff0, wqe_cnt, &w), -EINVAL);
	ck_assert_uint_eq(w.bbs, 1);	/* the step past it */
	qp->layout.sq_wqe_cnt = wqe_cnt;
}
END_TEST

START_TEST(test_reject_other_qpn)
{
	ctrl_write(0, MLX5_OPCODE_SEND, fx.qp.qpn + 1, 2);
	ck_assert_int_eq(parse(0), -EINVAL);
}
END_TEST

START_TEST(test_reject_unknown_opcode)
{
	ctrl_write(0, MLX5_OPCODE_TSO, fx.qp.qpn, 2);
	ck_assert_int_eq(parse(0), -EOPNOTSUPP);
}
END_TEST

START_TEST(test_reject_missing_raddr)
{
	ctrl_write(0, MLX5_OPCODE_RDMA_WRITE, fx.qp.qpn, 1);
	ck_assert_int_eq(parse(0), -EINVAL);
}
END_TEST

/* Inline data longer than the WQE holds, or than the device allows. */
START_TEST(test_reject_inline_overrun)
{
	struct mlx5_wqe_inl_data_seg *h = fx_sq_seg(0, 1);

	ctrl_write(0, MLX5_OPCODE_SEND, fx.qp.qpn, 3);
	h->byte_count = htobe32(29 | MLX5_INLINE_SEG);	/* 28 bytes fit in 2 segments */
	ck_assert_int_eq(parse(0), -EINVAL);
	ctrl_write(0, MLX5_OPCODE_SEND, fx.qp.qpn, 63);
	h->byte_count = htobe32((ROCEMU_MAX_INLINE + 1) | MLX5_INLINE_SEG);
	ck_assert_int_eq(parse(0), -EINVAL);
}
END_TEST

START_TEST(test_reject_too_many_sges)
{
	uint32_t ds = 2 + ROCEMU_MAX_SGE;	/* ctrl and one SGE more than allowed */

	ctrl_write(0, MLX5_OPCODE_SEND, fx.qp.qpn, ds);
	for (uint32_t i = 1; i < ds; i++) {
		struct mlx5_wqe_data_seg *d = fx_sq_seg(0, i);

		d->byte_count = htobe32(1);
		d->lkey = htobe32(fx.lkey);
		d->addr = htobe64((uintptr_t)fx.buf);
	}
	ck_assert_int_eq(parse(0), -EINVAL);
}
END_TEST

/* Posted, a malformed WQE fails with LOCAL_QP_OP_ERR; what follows is flushed. */
START_TEST(test_malformed_wqe_fails_qp)
{
	const struct ibv_sge sge = { .addr = (uintptr_t)fx.buf, .length = 8, .lkey = fx.lkey };
	const struct fx_wr wr = { .opcode = MLX5_OPCODE_SEND, .sge = &sge, .num_sge = 1 };

	ctrl_write(0, MLX5_OPCODE_SEND, fx.qp.qpn + 1, 2);
	fx.qp.sq_cur = 1;
	fx_post_send(&wr);
	fx_doorbell();
	ck_assert_uint_eq(fx.nwire, 0);
	fx_expect_cqe(&fx.scq, MLX5_CQE_REQ_ERR, 0, MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR);
	fx_expect_cqe(&fx.scq, MLX5_CQE_REQ_ERR, 1, MLX5_CQE_SYNDROME_WR_FLUSH_ERR);
	fx_expect_qp_error(IBV_EVENT_QP_FATAL);
}
END_TEST

/* A receive WQE's SGE list ends at the first MLX5_INVALID_LKEY; empty SGEs are skipped. */
START_TEST(test_recv_sge_list)
{
	const struct ibv_sge sge[3] = {
		{ .addr = 0x1000, .length = 64, .lkey = 0x201 },
		{ .addr = 0x2000, .length = 0, .lkey = 0x202 },
		{ .addr = 0x3000, .length = 32, .lkey = 0x203 },
	};
	struct rocemu_rq_ring rq = rocemu_qp_rq_ring(fx_emu_qp());
	struct rocemu_recv_wqe r;

	fx_post_recv(sge, 3);
	fx_post_recv(sge, 1);
	ck_assert_int_eq(rocemu_wqe_parse_recv(&rq, 0, &r), 0);
	ck_assert_uint_eq(r.counter, 0);
	ck_assert_uint_eq(r.num_sge, 2);
	ck_assert_uint_eq(r.length, 96);
	ck_assert_uint_eq(r.sge[1].addr, 0x3000);
	ck_assert_uint_eq(r.sge[1].key, 0x203);
	ck_assert_int_eq(rocemu_wqe_parse_recv(&rq, 1, &r), 0);
	ck_assert_uint_eq(r.num_sge, 1);
	ck_assert_uint_eq(r.length, 64);
}
END_TEST

static Suite *wqe_suite(void)
{
	Suite *s = suite_create("wqe");
	TCase *tc = tcase_create("wqe");

	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_add_test(tc, test_write_with_sgl);
	tcase_add_test(tc, test_format_table_parse);
	tcase_add_test(tc, test_compare_swap);
	tcase_add_test(tc, test_inline_wraps_past_ring_end);
	tcase_add_test(tc, test_inline_then_pointer);
	tcase_add_test(tc, test_reject_inline_after_pointer);
	tcase_add_test(tc, test_reject_no_segments);
	tcase_add_test(tc, test_reject_without_send_queue);
	tcase_add_test(tc, test_reject_other_qpn);
	tcase_add_test(tc, test_reject_unknown_opcode);
	tcase_add_test(tc, test_reject_missing_raddr);
	tcase_add_test(tc, test_reject_inline_overrun);
	tcase_add_test(tc, test_reject_too_many_sges);
	tcase_add_test(tc, test_malformed_wqe_fails_qp);
	tcase_add_test(tc, test_recv_sge_list);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return fx_suite_run(wqe_suite());
}
