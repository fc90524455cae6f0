/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Completion channels (emulator/obj/comp_channel.c): a pipe whose read
 * end the client gets (blocking, for ibv_get_cq_event) and whose write end
 * the daemon keeps non-blocking; destroy refused with EBUSY while a CQ
 * reports to it and EINVAL for a handle the context does not own, and a
 * destroyed channel's read end sees the end of file.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "emulator/obj/comp_channel.h"
#include "emulator/obj/cq.h"
#include "tests/unit/fixture.h"

START_TEST(test_pipe_ends)
{
	struct rocemu_channel *ch;
	uint32_t handle;
	uint64_t word = 0x1122334455667788ull, seen = 0;
	int read_fd;

	ck_assert_int_eq(rocemu_channel_create(fx.client, &handle, &read_fd), 0);
	ck_assert_uint_ge(handle, 1);
	ch = rocemu_channel_lookup(fx.client, handle);
	ck_assert_ptr_nonnull(ch);
	ck_assert_int_ne(fcntl(ch->event_fd, F_GETFL) & O_NONBLOCK, 0);
	ck_assert_int_eq(fcntl(read_fd, F_GETFL) & O_NONBLOCK, 0);
	ck_assert_int_ne(fcntl(read_fd, F_GETFD) & FD_CLOEXEC, 0);
	/* What the daemon writes is what the client reads. */
	ck_assert_int_eq(write(ch->event_fd, &word, sizeof(word)), sizeof(word));
	ck_assert_int_eq(read(read_fd, &seen, sizeof(seen)), sizeof(seen));
	ck_assert_uint_eq(seen, word);
	ck_assert_int_eq(rocemu_channel_destroy(fx.client, handle), 0);
	ck_assert_ptr_null(rocemu_channel_lookup(fx.client, handle));
	/* The daemon's end is closed: the client's read ends instead of blocking. */
	ck_assert_int_eq(read(read_fd, &seen, sizeof(seen)), 0);
	close(read_fd);
}
END_TEST

START_TEST(test_busy_while_cq_reports)
{
	struct rocemu_create_cq_req req = { .cqe = FX_CQE, .user_cq = FX_USER_CQ };
	struct rocemu_cq_layout layout;
	int read_fd, cq_fd;

	ck_assert_int_eq(rocemu_channel_create(fx.client, &req.channel, &read_fd), 0);
	ck_assert_int_eq(rocemu_cq_create(fx.client, &req, &layout, &cq_fd), 0);
	close(cq_fd);
	ck_assert_uint_eq(rocemu_channel_lookup(fx.client, req.channel)->users, 1);
	ck_assert_int_eq(rocemu_channel_destroy(fx.client, req.channel), -EBUSY);
	ck_assert_int_eq(rocemu_cq_destroy(fx.client, layout.cqn), 0);
	ck_assert_uint_eq(rocemu_channel_lookup(fx.client, req.channel)->users, 0);
	ck_assert_int_eq(rocemu_channel_destroy(fx.client, req.channel), 0);
	close(read_fd);
}
END_TEST

START_TEST(test_destroy_checks)
{
	struct rocemu_client *other = fx_client_new();
	uint32_t handle;
	int read_fd;

	ck_assert_int_eq(rocemu_channel_create(fx.client, &handle, &read_fd), 0);
	ck_assert_int_eq(rocemu_channel_destroy(other, handle), -EINVAL);
	ck_assert_ptr_null(rocemu_channel_lookup(other, handle));
	ck_assert_int_eq(rocemu_channel_destroy(fx.client, handle + 1000), -EINVAL);
	ck_assert_int_eq(rocemu_channel_destroy(fx.client, handle), 0);
	ck_assert_int_eq(rocemu_channel_destroy(fx.client, handle), -EINVAL);
	close(read_fd);
}
END_TEST

/* A CQ cannot name a channel of another context. */
START_TEST(test_cq_on_other_context_channel)
{
	struct rocemu_create_cq_req req = { .cqe = FX_CQE, .user_cq = FX_USER_CQ };
	struct rocemu_client *other = fx_client_new();
	struct rocemu_cq_layout layout;
	int read_fd, cq_fd;

	ck_assert_int_eq(rocemu_channel_create(other, &req.channel, &read_fd), 0);
	ck_assert_int_eq(rocemu_cq_create(fx.client, &req, &layout, &cq_fd), -EINVAL);
	ck_assert_uint_eq(rocemu_channel_lookup(other, req.channel)->users, 0);
	close(read_fd);
}
END_TEST

static Suite *comp_channel_suite(void)
{
	Suite *s = suite_create("comp_channel");
	TCase *tc = tcase_create("comp_channel");

	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_add_test(tc, test_pipe_ends);
	tcase_add_test(tc, test_busy_while_cq_reports);
	tcase_add_test(tc, test_destroy_checks);
	tcase_add_test(tc, test_cq_on_other_context_channel);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return fx_suite_run(comp_channel_suite());
}
