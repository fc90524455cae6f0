/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The object space contexts share (emulator/mem/ufile.c): the cmd_fd
 * holds one header (magic, device, a random token) that importers peek at
 * and that stays; a context importing the token joins the ufile and sees
 * its PDs; data a holder writes into the cmd_fd is dropped; the ufile
 * lives while a context is bound to it or a process holds the cmd_fd, and
 * goes with the last of both, whichever it is.
 */
#include <check.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "emulator/core/client.h"
#include "emulator/ctrl/client_life.h"
#include "emulator/mem/pd_mr.h"
#include "emulator/mem/ufile.h"
#include "tests/unit/fixture.h"

/* A context of the test process, its control socket's other end closed. */
static struct rocemu_client *context_new(void)
{
	struct rocemu_client *c;
	int sv[2];

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	c = rocemu_client_new(&fx.emu, sv[0], getpid(), getuid());
	ck_assert_ptr_nonnull(c);
	close(sv[1]);
	return c;
}

/* OPEN_DEVICE (token NULL) or IMPORT_DEVICE of token for c, proven; the cmd_fd of an open, else -1. */
static int context_open(struct rocemu_client *c, const uint8_t *token, int expect)
{
	struct rocemu_open_device_req req = { .pid = (uint32_t)getpid() };
	struct rocemu_open_device_resp resp;
	int fds[4], nfds = 0, i, cmd_fd = -1;

	req.mem = (struct rocemu_mem_proof){ .self = (uintptr_t)&req, .uffd = -1, .guard_fd = -1 };
	memcpy(req.mem.nonce, &c, sizeof(c));
	if (token)
		ck_assert_int_eq(rocemu_client_import_device(c, token, &req, sizeof(req), &req.mem,
							     &resp, fds, &nfds), expect);
	else
		ck_assert_int_eq(rocemu_client_open_device(c, 0, &req, sizeof(req), &req.mem,
							   &resp, fds, &nfds), expect);
	if (expect)
		return -1;
	ck_assert_int_eq(nfds, token ? 3 : 4);
	if (!token)
		cmd_fd = fds[--nfds];
	for (i = 0; i < nfds; i++)
		close(fds[i]);
	return cmd_fd;
}

static void peek_header(int cmd_fd, struct rocemu_cmd_file_hdr *hdr)
{
	ck_assert_int_eq(recv(cmd_fd, hdr, sizeof(*hdr), MSG_PEEK | MSG_DONTWAIT), sizeof(*hdr));
}

START_TEST(test_header_names_the_ufile)
{
	struct rocemu_client *a = context_new(), *b = context_new();
	int cmd_a = context_open(a, NULL, 0), cmd_b = context_open(b, NULL, 0);
	struct rocemu_cmd_file_hdr hdr, again, other;
	uint8_t unknown[ROCEMU_CMD_TOKEN_LEN];

	peek_header(cmd_a, &hdr);
	ck_assert_uint_eq(hdr.magic, ROCEMU_CMD_FILE_MAGIC);
	ck_assert_uint_eq(hdr.dev_index, fx.dev->index);
	ck_assert_mem_eq(hdr.token, a->ufile->token, sizeof(hdr.token));
	/* It stays for the next importer. */
	peek_header(cmd_a, &again);
	ck_assert_mem_eq(&again, &hdr, sizeof(hdr));
	ck_assert_ptr_eq(rocemu_ufile_find(&fx.emu, hdr.token), a->ufile);
	/* Each open, its own ufile and token. */
	peek_header(cmd_b, &other);
	ck_assert_ptr_ne(b->ufile, a->ufile);
	ck_assert_mem_ne(other.token, hdr.token, sizeof(hdr.token));
	ck_assert_ptr_eq(rocemu_ufile_find(&fx.emu, other.token), b->ufile);
	memcpy(unknown, hdr.token, sizeof(unknown));
	unknown[0] ^= 1;
	ck_assert_ptr_null(rocemu_ufile_find(&fx.emu, unknown));
	context_open(context_new(), unknown, -EINVAL);
	close(cmd_a);
	close(cmd_b);
}
END_TEST

/* An importer joins the ufile: the PD one context made is the other's too. */
START_TEST(test_import_shares_objects)
{
	struct rocemu_client *a = context_new(), *b = context_new();
	int cmd_fd = context_open(a, NULL, 0);
	struct rocemu_cmd_file_hdr hdr;
	uint32_t pdn = fx_pd_alloc(a);

	peek_header(cmd_fd, &hdr);
	context_open(b, hdr.token, 0);
	ck_assert_ptr_eq(b->ufile, a->ufile);
	ck_assert_uint_eq(a->ufile->contexts, 2);
	ck_assert_ptr_nonnull(rocemu_pd_lookup(b, pdn));
	ck_assert_ptr_null(rocemu_pd_lookup(fx.client, pdn));
	close(cmd_fd);
}
END_TEST

/* Closed by every holder while contexts are bound: it lives until the last context leaves. */
START_TEST(test_lives_with_its_last_context)
{
	struct rocemu_client *a = context_new(), *b = context_new();
	int cmd_fd = context_open(a, NULL, 0);
	struct rocemu_cmd_file_hdr hdr;

	peek_header(cmd_fd, &hdr);
	context_open(b, hdr.token, 0);
	close(cmd_fd);
	fx_turn();
	ck_assert_int_lt(a->ufile->sock, 0);
	rocemu_client_free(a);
	ck_assert_ptr_eq(rocemu_ufile_find(&fx.emu, hdr.token), b->ufile);
	ck_assert_uint_eq(b->ufile->contexts, 1);
	rocemu_client_free(b);
	ck_assert_ptr_null(rocemu_ufile_find(&fx.emu, hdr.token));
}
END_TEST

/* Every context gone while a process holds the cmd_fd: it lives until the hang-up. */
START_TEST(test_lives_with_its_cmd_fd)
{
	struct rocemu_client *a = context_new();
	int cmd_fd = context_open(a, NULL, 0);
	struct rocemu_cmd_file_hdr hdr;

	peek_header(cmd_fd, &hdr);
	rocemu_client_free(a);
	fx_turn();
	ck_assert_ptr_nonnull(rocemu_ufile_find(&fx.emu, hdr.token));
	/* A later importer still finds it. */
	a = context_new();
	context_open(a, hdr.token, 0);
	rocemu_client_free(a);
	close(cmd_fd);
	fx_turn();
	ck_assert_ptr_null(rocemu_ufile_find(&fx.emu, hdr.token));
}
END_TEST

/* What a holder writes into the cmd_fd is read and dropped: no hang-up, the header intact. */
START_TEST(test_written_data_dropped)
{
	struct rocemu_client *a = context_new();
	int cmd_fd = context_open(a, NULL, 0);
	struct rocemu_cmd_file_hdr hdr, after;

	peek_header(cmd_fd, &hdr);
	rocemu_client_free(a);
	ck_assert_int_eq(send(cmd_fd, "junk", 4, MSG_NOSIGNAL), 4);
	fx_turn();
	ck_assert_ptr_nonnull(rocemu_ufile_find(&fx.emu, hdr.token));
	ck_assert_int_ge(rocemu_ufile_find(&fx.emu, hdr.token)->sock, 0);
	peek_header(cmd_fd, &after);
	ck_assert_mem_eq(&after, &hdr, sizeof(hdr));
	close(cmd_fd);
}
END_TEST

/* An empty message reads as 0 bytes, as a hang-up does, yet the holder is still there. */
START_TEST(test_empty_message_no_hangup)
{
	struct rocemu_client *a = context_new();
	int cmd_fd = context_open(a, NULL, 0);
	struct rocemu_cmd_file_hdr hdr;

	peek_header(cmd_fd, &hdr);
	rocemu_client_free(a);
	ck_assert_int_eq(send(cmd_fd, "", 0, MSG_NOSIGNAL), 0);
	fx_turn();
	ck_assert_ptr_nonnull(rocemu_ufile_find(&fx.emu, hdr.token));
	/* A later importer still finds it, and the real hang-up still ends it. */
	a = context_new();
	context_open(a, hdr.token, 0);
	rocemu_client_free(a);
	close(cmd_fd);
	fx_turn();
	ck_assert_ptr_null(rocemu_ufile_find(&fx.emu, hdr.token));
}
END_TEST

/* A holder shutting its end down is the end of file for every holder: the ufile goes. */
START_TEST(test_shutdown_ends_it)
{
	struct rocemu_client *a = context_new();
	int cmd_fd = context_open(a, NULL, 0);
	struct rocemu_cmd_file_hdr hdr;

	peek_header(cmd_fd, &hdr);
	rocemu_client_free(a);
	ck_assert_int_eq(shutdown(cmd_fd, SHUT_WR), 0);
	fx_turn();
	ck_assert_ptr_null(rocemu_ufile_find(&fx.emu, hdr.token));
	close(cmd_fd);
}
END_TEST

static Suite *ufile_suite(void)
{
	Suite *s = suite_create("ufile");
	TCase *tc = tcase_create("ufile");

	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_add_test(tc, test_header_names_the_ufile);
	tcase_add_test(tc, test_import_shares_objects);
	tcase_add_test(tc, test_lives_with_its_last_context);
	tcase_add_test(tc, test_lives_with_its_cmd_fd);
	tcase_add_test(tc, test_written_data_dropped);
	tcase_add_test(tc, test_empty_message_no_hangup);
	tcase_add_test(tc, test_shutdown_ends_it);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return fx_suite_run(ufile_suite());
}
