/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The layout of a QP's memfd (emulator/obj/qp_layout.c): capabilities
 * past the device's limits refused with EINVAL, the granted ones clamped
 * to them and never below what was asked, and the SQ, RQ, doorbell record
 * and BlueFlame area each page-aligned where the next begins, in order;
 * a ConnectX-3's UAR and BlueFlame pages whole pages, which programs map.
 */
#include <check.h>
#include <errno.h>
#include <unistd.h>

#include "emulator/core/device.h"
#include "emulator/mlx4/format.h"
#include "emulator/mlx5/format.h"
#include "emulator/obj/qp_layout.h"
#include "rocemu/ring.h"

/* A ConnectX-5's rings: no inline receive. */
static int mlx5_layout(const struct ibv_qp_cap *want, enum ibv_qp_type type, uint32_t max_tso_header,
		       struct ibv_qp_cap *granted, struct rocemu_qp_layout *layout)
{
	return rocemu_qp_layout(&rocemu_ring_mlx5, want, type, max_tso_header, 0, granted, layout);
}

static uint64_t page(void)
{
	return (uint64_t)sysconf(_SC_PAGESIZE);
}

static const struct ibv_qp_cap small = { .max_send_wr = 16, .max_recv_wr = 16,
					 .max_send_sge = 4, .max_recv_sge = 4,
					 .max_inline_data = 64 };

START_TEST(test_past_device_limits_refused)
{
	struct rocemu_qp_layout layout;
	struct ibv_qp_cap want, granted;

	want = small;
	want.max_send_wr = ROCEMU_MAX_QP_WR + 1;
	ck_assert_int_eq(mlx5_layout(&want, IBV_QPT_RC, 0, &granted, &layout), -EINVAL);
	want = small;
	want.max_recv_wr = ROCEMU_MAX_QP_WR + 1;
	ck_assert_int_eq(mlx5_layout(&want, IBV_QPT_RC, 0, &granted, &layout), -EINVAL);
	want = small;
	want.max_send_sge = ROCEMU_MAX_SGE + 1;
	ck_assert_int_eq(mlx5_layout(&want, IBV_QPT_RC, 0, &granted, &layout), -EINVAL);
	want = small;
	want.max_recv_sge = ROCEMU_MAX_SGE + 1;
	ck_assert_int_eq(mlx5_layout(&want, IBV_QPT_RC, 0, &granted, &layout), -EINVAL);
	want = small;
	want.max_inline_data = ROCEMU_MAX_INLINE + 1;
	ck_assert_int_eq(mlx5_layout(&want, IBV_QPT_RC, 0, &granted, &layout), -EINVAL);
	/* Every limit at once is still a queue the contract's counters tell apart. */
	want = (struct ibv_qp_cap){ .max_send_wr = 1, .max_recv_wr = ROCEMU_MAX_QP_WR,
				    .max_send_sge = ROCEMU_MAX_SGE, .max_recv_sge = ROCEMU_MAX_SGE,
				    .max_inline_data = ROCEMU_MAX_INLINE };
	ck_assert_int_eq(mlx5_layout(&want, IBV_QPT_RC, 0, &granted, &layout), 0);
}
END_TEST

/* Granted: at least what was asked, at most the device's limits. */
START_TEST(test_granted_within_limits)
{
	struct rocemu_qp_layout layout;
	struct ibv_qp_cap want = small, granted;

	ck_assert_int_eq(mlx5_layout(&want, IBV_QPT_RC, 0, &granted, &layout), 0);
	ck_assert_uint_ge(granted.max_send_wr, want.max_send_wr);
	ck_assert_uint_ge(granted.max_recv_wr, want.max_recv_wr);
	ck_assert_uint_ge(granted.max_send_sge, want.max_send_sge);
	ck_assert_uint_ge(granted.max_recv_sge, want.max_recv_sge);
	ck_assert_uint_ge(granted.max_inline_data, want.max_inline_data);
	ck_assert_uint_le(granted.max_send_sge, ROCEMU_MAX_SGE);
	ck_assert_uint_le(granted.max_recv_sge, ROCEMU_MAX_SGE);
	ck_assert_uint_le(granted.max_inline_data, ROCEMU_MAX_INLINE);
	/* A WQE stride of room for more than ROCEMU_MAX_SGE is still granted that many. */
	want.max_recv_sge = ROCEMU_MAX_SGE;
	want.max_send_sge = ROCEMU_MAX_SGE;
	ck_assert_int_eq(mlx5_layout(&want, IBV_QPT_RC, 0, &granted, &layout), 0);
	ck_assert_uint_eq(granted.max_recv_sge, ROCEMU_MAX_SGE);
	ck_assert_uint_eq(granted.max_send_sge, ROCEMU_MAX_SGE);
}
END_TEST

/* SQ at 0, RQ, doorbell record, BlueFlame: each after the last, the rings page-aligned. */
START_TEST(test_regions_in_order)
{
	struct rocemu_qp_layout layout;
	struct ibv_qp_cap granted;
	uint64_t sq_bytes, rq_bytes;

	ck_assert_int_eq(mlx5_layout(&small, IBV_QPT_RC, 0, &granted, &layout), 0);
	sq_bytes = (uint64_t)layout.sq_wqe_cnt * ROCEMU_WQE_BB;
	rq_bytes = (uint64_t)layout.rq_wqe_cnt << layout.rq_wqe_shift;
	ck_assert_uint_eq(layout.qpn, 0);
	ck_assert_uint_ge(layout.sq_wqe_cnt, small.max_send_wr);
	ck_assert_uint_ge(layout.rq_wqe_cnt, small.max_recv_wr);
	ck_assert_uint_eq(layout.sq_offset, 0);
	ck_assert_uint_eq(layout.rq_offset % page(), 0);
	ck_assert_uint_ge(layout.rq_offset, sq_bytes);
	ck_assert_uint_eq(layout.dbrec_offset % page(), 0);
	ck_assert_uint_ge(layout.dbrec_offset, layout.rq_offset + rq_bytes);
	ck_assert_uint_gt(layout.bf_offset, layout.dbrec_offset);
	ck_assert_uint_eq(layout.bf_size, ROCEMU_BF_SIZE);
	ck_assert_uint_eq(layout.size % page(), 0);
	ck_assert_uint_ge(layout.size, layout.bf_offset + layout.bf_size);
}
END_TEST

/* A ConnectX-3's doorbell area is its UAR page and its BlueFlame page, page-aligned in the memfd. */
START_TEST(test_mlx4_doorbell_pages)
{
	struct rocemu_qp_layout layout;
	struct ibv_qp_cap granted;

	ck_assert_int_eq(rocemu_qp_layout(&rocemu_ring_mlx4, &small, IBV_QPT_RC, 0, 0, &granted,
					  &layout), 0);
	ck_assert_uint_eq(layout.bf_size, 2 * page());
	ck_assert_uint_eq(layout.bf_offset % page(), 0);
	ck_assert_uint_gt(layout.bf_offset, layout.dbrec_offset);
	ck_assert_uint_ge(layout.size, layout.bf_offset + layout.bf_size);
}
END_TEST

/* No receive queue (an XRC initiator): no RQ bytes, the doorbell record right after the SQ. */
START_TEST(test_no_receive_queue)
{
	struct ibv_qp_cap want = small, granted;
	struct rocemu_qp_layout layout;

	want.max_recv_wr = 0;
	want.max_recv_sge = 0;
	ck_assert_int_eq(mlx5_layout(&want, IBV_QPT_XRC_SEND, 0, &granted, &layout), 0);
	ck_assert_uint_eq(layout.rq_wqe_cnt, 0);
	ck_assert_uint_eq(layout.dbrec_offset, layout.rq_offset);
}
END_TEST

/*
 * A RAW_PACKET QP's TSO header takes room in each send WQE, not from the
 * caps granted: 64 WQEs of one SGE and a 256-byte header are 5 BBs each
 * (48 + 256 + 16 bytes), 512 BBs of ring, and max_send_wr stays 64+.
 */
START_TEST(test_tso_header_room)
{
	struct ibv_qp_cap want = { .max_send_wr = 64, .max_send_sge = 1, .max_recv_wr = 1,
				   .max_recv_sge = 1 }, plain, granted;
	struct rocemu_qp_layout layout;

	ck_assert_int_eq(mlx5_layout(&want, IBV_QPT_RAW_PACKET, 0, &plain, &layout), 0);
	ck_assert_uint_eq(layout.sq_wqe_cnt, 64);
	ck_assert_int_eq(mlx5_layout(&want, IBV_QPT_RAW_PACKET, 256, &granted, &layout), 0);
	ck_assert_uint_eq(layout.sq_wqe_cnt, 512);
	ck_assert_uint_ge(granted.max_send_wr, want.max_send_wr);
	ck_assert_uint_eq(granted.max_send_sge, plain.max_send_sge);
	ck_assert_uint_eq(granted.max_inline_data, plain.max_inline_data);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("qp_layout");
	TCase *tc = tcase_create("qp_layout");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_past_device_limits_refused);
	tcase_add_test(tc, test_granted_within_limits);
	tcase_add_test(tc, test_regions_in_order);
	tcase_add_test(tc, test_mlx4_doorbell_pages);
	tcase_add_test(tc, test_no_receive_queue);
	tcase_add_test(tc, test_tso_header_room);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
