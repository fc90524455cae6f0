/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Completion queues (emulator/obj/cq.c) through CREATE_CQ, RESIZE_CQ and
 * DESTROY_CQ: what ibv_create_cq(3) refuses with EINVAL (no entries, past
 * max_cqe, a CQE size mlx5 has not, a channel not the client's), the
 * power-of-two ring it grants (cqe = ncqe - 1, as mlx5), a resize keeping
 * the CQ's number and CQE size, EBUSY on destroy while a QP uses it; a
 * completion channel (comp_channel.c) held by its CQs and its client's alone.
 */
#include <check.h>
#include <errno.h>
#include <unistd.h>

#include "emulator/core/device.h"
#include "emulator/obj/comp_channel.h"
#include "emulator/obj/cq.h"
#include "tests/unit/fixture.h"

static int cq_create(struct rocemu_client *c, uint32_t cqe, uint32_t cqe_size, uint32_t channel,
		     struct rocemu_cq_layout *layout)
{
	const struct rocemu_create_cq_req req = { .cqe = cqe, .cqe_size = cqe_size,
						  .channel = channel, .user_cq = FX_USER_CQ };
	int fd, err = rocemu_cq_create(c, &req, layout, &fd);

	if (!err)
		close(fd);
	return err;
}

START_TEST(test_create_refused)
{
	struct rocemu_client *other = fx_client_new();
	struct rocemu_cq_layout cq;
	uint32_t theirs;
	int fd;

	ck_assert_int_eq(cq_create(fx.client, 0, 0, ROCEMU_NO_HANDLE, &cq), -EINVAL);
	ck_assert_int_eq(cq_create(fx.client, ROCEMU_MAX_CQE + 1, 0, ROCEMU_NO_HANDLE, &cq),
			 -EINVAL);
	ck_assert_int_eq(cq_create(fx.client, 16, 32, ROCEMU_NO_HANDLE, &cq), -EINVAL);
	ck_assert_int_eq(rocemu_channel_create(other, &theirs, &fd), 0);
	close(fd);
	ck_assert_int_eq(cq_create(fx.client, 16, 0, theirs, &cq), -EINVAL);
	ck_assert_int_eq(cq_create(other, 16, 0, theirs, &cq), 0);
}
END_TEST

START_TEST(test_create_grants)
{
	struct rocemu_cq_layout cq;

	ck_assert_int_eq(cq_create(fx.client, 100, 0, ROCEMU_NO_HANDLE, &cq), 0);
	ck_assert_uint_eq(cq.ncqe & (cq.ncqe - 1), 0);
	ck_assert_uint_ge(cq.ncqe - 1, 100);
	ck_assert_uint_eq(cq.cqe_size, 64);
	ck_assert_uint_ge(cq.size, cq.dbrec_offset + 8);
	ck_assert_int_eq(cq_create(fx.client, ROCEMU_MAX_CQE, 128, ROCEMU_NO_HANDLE, &cq), 0);
	ck_assert_uint_eq(cq.cqe_size, 128);
	ck_assert_uint_ge(cq.ncqe - 1, ROCEMU_MAX_CQE);
}
END_TEST

START_TEST(test_resize)
{
	struct rocemu_cq_layout cq, resized;
	struct rocemu_resize_cq_req req;
	int fd;

	ck_assert_int_eq(cq_create(fx.client, 16, 128, ROCEMU_NO_HANDLE, &cq), 0);
	req = (struct rocemu_resize_cq_req){ .cqn = cq.cqn, .cqe = ROCEMU_MAX_CQE + 1 };
	ck_assert_int_eq(rocemu_cq_resize(fx.client, &req, &resized, &fd), -EINVAL);
	req.cqe = 0;
	ck_assert_int_eq(rocemu_cq_resize(fx.client, &req, &resized, &fd), -EINVAL);
	req = (struct rocemu_resize_cq_req){ .cqn = cq.cqn + 1000, .cqe = 64 };
	ck_assert_int_eq(rocemu_cq_resize(fx.client, &req, &resized, &fd), -EINVAL);
	req.cqn = cq.cqn;
	ck_assert_int_eq(rocemu_cq_resize(fx.client, &req, &resized, &fd), 0);
	close(fd);
	ck_assert_uint_eq(resized.cqn, cq.cqn);
	ck_assert_uint_eq(resized.cqe_size, 128);
	ck_assert_uint_ge(resized.ncqe - 1, 64);
}
END_TEST

START_TEST(test_destroy)
{
	struct rocemu_cq_layout cq;

	ck_assert_int_eq(cq_create(fx.client, 16, 0, ROCEMU_NO_HANDLE, &cq), 0);
	ck_assert_int_eq(rocemu_cq_destroy(fx.client, cq.cqn), 0);
	ck_assert_ptr_null(rocemu_cq_lookup(fx.client, cq.cqn));
	ck_assert_int_eq(rocemu_cq_destroy(fx.client, cq.cqn), -EINVAL);
	/* The fixture's QP completes to both its CQs. */
	ck_assert_int_eq(rocemu_cq_destroy(fx.client, fx.scq.cqn), -EBUSY);
	ck_assert_int_eq(rocemu_cq_destroy(fx.client, fx.rcq.cqn), -EBUSY);
}
END_TEST

/* ibv_destroy_comp_channel: EBUSY while a CQ reports to it. */
START_TEST(test_channel)
{
	struct rocemu_client *other = fx_client_new();
	struct rocemu_cq_layout cq;
	uint32_t channel;
	int fd;

	ck_assert_int_eq(rocemu_channel_create(fx.client, &channel, &fd), 0);
	close(fd);
	ck_assert_ptr_nonnull(rocemu_channel_lookup(fx.client, channel));
	ck_assert_ptr_null(rocemu_channel_lookup(other, channel));
	ck_assert_int_eq(rocemu_channel_destroy(other, channel), -EINVAL);
	ck_assert_int_eq(cq_create(fx.client, 16, 0, channel, &cq), 0);
	ck_assert_int_eq(rocemu_channel_destroy(fx.client, channel), -EBUSY);
	ck_assert_int_eq(rocemu_cq_destroy(fx.client, cq.cqn), 0);
	ck_assert_int_eq(rocemu_channel_destroy(fx.client, channel), 0);
	ck_assert_int_eq(rocemu_channel_destroy(fx.client, channel), -EINVAL);
}
END_TEST

static Suite *cq_suite(void)
{
	Suite *s = suite_create("cq");
	TCase *tc = tcase_create("cq");

	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_add_test(tc, test_create_refused);
	tcase_add_test(tc, test_create_grants);
	tcase_add_test(tc, test_resize);
	tcase_add_test(tc, test_destroy);
	tcase_add_test(tc, test_channel);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return fx_suite_run(cq_suite());
}
