/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * XRC domains (emulator/obj/xrcd.c) through OPEN_XRCD and CLOSE_XRCD as
 * ibv_open_xrcd(3) asks: a private domain per open without a file; a
 * file's domain shared by every open of it, made only with O_CREAT
 * (EAGAIN), refused with O_EXCL when present (EINVAL), living while any
 * open does; no fd, EBADF; a close of another's or a busy open refused.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "emulator/obj/srq.h"
#include "emulator/obj/xrcd.h"
#include "tests/unit/fixture.h"

static FILE *domain_file;	/* the file that names a shared domain */

static void setup(void)
{
	fx_setup();
	domain_file = tmpfile();
	ck_assert_ptr_nonnull(domain_file);
}

static void teardown(void)
{
	fx_teardown();
	fclose(domain_file);
}

/* Open with the domain file's fd as the request carries it (SCM_RIGHTS), or none. */
static int xrcd_open(struct rocemu_client *c, bool shared, uint32_t oflags,
		     struct rocemu_open_xrcd_resp *resp)
{
	const struct rocemu_open_xrcd_req req = { .oflags = oflags, .shared = shared };
	int err;

	c->req_fd = shared ? fileno(domain_file) : -1;
	err = rocemu_xrcd_open(c, &req, resp);
	c->req_fd = -1;
	return err;
}

START_TEST(test_private)
{
	struct rocemu_open_xrcd_resp a, b;

	ck_assert_int_eq(xrcd_open(fx.client, false, 0, &a), 0);
	ck_assert_int_eq(xrcd_open(fx.client, false, 0, &b), 0);
	ck_assert_uint_ne(a.xrcdn, b.xrcdn);
	ck_assert_uint_ne(a.handle, b.handle);
	ck_assert_int_eq(rocemu_xrcd_close(fx.client, a.handle), 0);
	ck_assert_int_eq(rocemu_xrcd_close(fx.client, a.handle), -EINVAL);
	ck_assert_int_eq(rocemu_xrcd_close(fx.client, b.handle), 0);
}
END_TEST

START_TEST(test_shared_by_file)
{
	struct rocemu_client *other = fx_client_new();
	struct rocemu_open_xrcd_resp a, b, again;
	const struct rocemu_open_xrcd_req no_fd = { .shared = 1, .oflags = O_CREAT };

	fx.client->req_fd = -1;
	ck_assert_int_eq(rocemu_xrcd_open(fx.client, &no_fd, &a), -EBADF);
	/* ib_uverbs_open_xrcd: absent without O_CREAT; present with O_EXCL. */
	ck_assert_int_eq(xrcd_open(fx.client, true, 0, &a), -EAGAIN);
	ck_assert_int_eq(xrcd_open(fx.client, true, O_CREAT, &a), 0);
	ck_assert_int_eq(xrcd_open(other, true, 0, &b), 0);
	ck_assert_uint_eq(b.xrcdn, a.xrcdn);
	ck_assert_int_eq(xrcd_open(other, true, O_CREAT | O_EXCL, &again), -EINVAL);
	/* Another's open is not this client's to close. */
	ck_assert_int_eq(rocemu_xrcd_close(fx.client, b.handle), -EINVAL);
	/* The domain lives while any open does. */
	ck_assert_int_eq(rocemu_xrcd_close(fx.client, a.handle), 0);
	ck_assert_int_eq(xrcd_open(fx.client, true, 0, &again), 0);
	ck_assert_uint_eq(again.xrcdn, a.xrcdn);
	ck_assert_int_eq(rocemu_xrcd_close(fx.client, again.handle), 0);
	ck_assert_int_eq(rocemu_xrcd_close(other, b.handle), 0);
	ck_assert_int_eq(xrcd_open(fx.client, true, 0, &again), -EAGAIN);
}
END_TEST

/* An XRC SRQ made through an open holds it (EBUSY) until it goes. */
START_TEST(test_busy_while_used)
{
	struct rocemu_open_xrcd_resp x;
	struct rocemu_create_srq_req req = {
		.pdn = fx.pdn, .attr = { .max_wr = 16, .max_sge = 1 }, .srq_type = IBV_SRQT_XRC,
		.cqn = fx.rcq.cqn,
	};
	struct rocemu_create_srq_resp srq;
	int fd;

	ck_assert_int_eq(xrcd_open(fx.client, false, 0, &x), 0);
	req.xrcd = x.handle + 1000;
	ck_assert_int_eq(rocemu_srq_create(fx.client, &req, &srq, &fd), -EINVAL);
	req.xrcd = x.handle;
	ck_assert_int_eq(rocemu_srq_create(fx.client, &req, &srq, &fd), 0);
	close(fd);
	ck_assert_int_eq(rocemu_xrcd_close(fx.client, x.handle), -EBUSY);
	ck_assert_int_eq(rocemu_srq_destroy(fx.client, srq.layout.srqn), 0);
	ck_assert_int_eq(rocemu_xrcd_close(fx.client, x.handle), 0);
}
END_TEST

static Suite *xrcd_suite(void)
{
	Suite *s = suite_create("xrcd");
	TCase *tc = tcase_create("xrcd");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_private);
	tcase_add_test(tc, test_shared_by_file);
	tcase_add_test(tc, test_busy_while_used);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return fx_suite_run(xrcd_suite());
}
