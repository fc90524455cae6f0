/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The control protocol: header validation (rocemu_msg_check) for every op
 * in both directions, moving one message with its descriptors over a
 * real SOCK_SEQPACKET socketpair (rocemu_ctrl_send / rocemu_ctrl_recv),
 * and whom to trust (runtime_dir.h).
 */
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "rocemu/ctrl.h"
#include "rocemu/ctrl_io.h"

/* Header plus the largest body a message may carry. */
static unsigned char msg[sizeof(struct rocemu_msg_hdr) + ROCEMU_CTRL_MSG_MAX + 64];
#define HDR ((struct rocemu_msg_hdr *)msg)

/* A variable-length body in the tests below. */
#define SOME_TEXT_LEN 100u

enum { REQUEST = 0, RESPONSE = 1 };

static uint32_t body_size(int op, int is_response)
{
	uint32_t want = rocemu_ctrl_body_size[op][is_response];

	return want == ROCEMU_VARLEN ? SOME_TEXT_LEN : want;
}

/* Build op's message with a body of len bytes; returns the message size. */
static size_t build(int op, int32_t status, uint32_t len)
{
	rocemu_msg_init(HDR, (uint16_t)op, 7, status, len);
	memset(msg + sizeof(struct rocemu_msg_hdr), 0xa5, len);
	return sizeof(struct rocemu_msg_hdr) + len;
}

/* ---- rocemu_msg_init / rocemu_msg_check ---- */

START_TEST(test_init_fills_header)
{
	memset(msg, 0xff, sizeof(struct rocemu_msg_hdr));
	rocemu_msg_init(HDR, ROCEMU_OP_CREATE_CQ, 42, -EINVAL, 12);
	ck_assert_uint_eq(HDR->magic, ROCEMU_CTRL_MAGIC);
	ck_assert_uint_eq(HDR->version, ROCEMU_CTRL_VERSION);
	ck_assert_uint_eq(HDR->op, ROCEMU_OP_CREATE_CQ);
	ck_assert_uint_eq(HDR->seq, 42);
	ck_assert_int_eq(HDR->status, -EINVAL);
	ck_assert_uint_eq(HDR->len, 12);
	ck_assert_uint_eq(HDR->reserved, 0);
}
END_TEST

/* Loop index _i is the op. */
START_TEST(test_every_op_request_size_accepted)
{
	size_t n = build(_i, 0, body_size(_i, REQUEST));

	ck_assert_msg(rocemu_msg_check(msg, n, REQUEST) == 0, "%s request of %u bytes refused",
		      rocemu_ctrl_op_names[_i], body_size(_i, REQUEST));
}
END_TEST

START_TEST(test_every_op_response_size_accepted)
{
	size_t n = build(_i, 0, body_size(_i, RESPONSE));

	ck_assert_msg(rocemu_msg_check(msg, n, RESPONSE) == 0, "%s response of %u bytes refused",
		      rocemu_ctrl_op_names[_i], body_size(_i, RESPONSE));
}
END_TEST

START_TEST(test_every_op_has_a_name)
{
	ck_assert_ptr_nonnull(rocemu_ctrl_op_names[_i]);
	ck_assert_uint_gt(strlen(rocemu_ctrl_op_names[_i]), 0);
}
END_TEST

START_TEST(test_wrong_body_size)
{
	int dir;

	for (dir = REQUEST; dir <= RESPONSE; dir++) {
		uint32_t want = rocemu_ctrl_body_size[_i][dir];
		size_t n;

		if (want == ROCEMU_VARLEN)
			continue;
		n = build(_i, 0, want + 1);
		ck_assert_msg(rocemu_msg_check(msg, n, dir) == -EMSGSIZE, "%s %s: one byte too many",
			      rocemu_ctrl_op_names[_i], dir ? "response" : "request");
		if (want == 0)
			continue;
		n = build(_i, 0, want - 1);
		ck_assert_msg(rocemu_msg_check(msg, n, dir) == -EMSGSIZE, "%s %s: one byte short",
			      rocemu_ctrl_op_names[_i], dir ? "response" : "request");
	}
}
END_TEST

START_TEST(test_error_response_empty_body)
{
	size_t n = build(_i, -EINVAL, 0);

	ck_assert_int_eq(rocemu_msg_check(msg, n, RESPONSE), 0);
	n = build(_i, -EINVAL, 8);
	ck_assert_int_eq(rocemu_msg_check(msg, n, RESPONSE), -EMSGSIZE);
}
END_TEST

/* A text page: its header at least, the largest message at most. */
START_TEST(test_varlen_limits)
{
	size_t n;

	n = build(ROCEMU_OP_STATUS, 0, 0);
	ck_assert_int_eq(rocemu_msg_check(msg, n, RESPONSE), -EMSGSIZE);
	n = build(ROCEMU_OP_STATUS, 0, sizeof(struct rocemu_text_resp) - 1);
	ck_assert_int_eq(rocemu_msg_check(msg, n, RESPONSE), -EMSGSIZE);
	n = build(ROCEMU_OP_STATUS, 0, sizeof(struct rocemu_text_resp));
	ck_assert_int_eq(rocemu_msg_check(msg, n, RESPONSE), 0);
	n = build(ROCEMU_OP_STATUS, 0, ROCEMU_CTRL_MSG_MAX);
	ck_assert_int_eq(rocemu_msg_check(msg, n, RESPONSE), 0);
	n = build(ROCEMU_OP_STATUS, 0, ROCEMU_CTRL_MSG_MAX + 1);
	ck_assert_int_eq(rocemu_msg_check(msg, n, RESPONSE), -EMSGSIZE);
}
END_TEST

START_TEST(test_wrong_magic)
{
	size_t n = build(ROCEMU_OP_ALLOC_PD, 0, 0);

	HDR->magic = ROCEMU_CTRL_MAGIC ^ 1;
	ck_assert_int_eq(rocemu_msg_check(msg, n, REQUEST), -EPROTO);
	HDR->magic = 0;
	ck_assert_int_eq(rocemu_msg_check(msg, n, RESPONSE), -EPROTO);
}
END_TEST

START_TEST(test_wrong_version)
{
	size_t n = build(ROCEMU_OP_ALLOC_PD, 0, 0);

	HDR->version = ROCEMU_CTRL_VERSION + 1;
	ck_assert_int_eq(rocemu_msg_check(msg, n, REQUEST), -EPROTONOSUPPORT);
	HDR->version = 0;
	ck_assert_int_eq(rocemu_msg_check(msg, n, REQUEST), -EPROTONOSUPPORT);
}
END_TEST

START_TEST(test_unknown_op)
{
	static const uint16_t bad_ops[] = { 0, ROCEMU_OP__COUNT, ROCEMU_OP__COUNT + 1, 0xffff };
	size_t i, n;

	for (i = 0; i < sizeof(bad_ops) / sizeof(bad_ops[0]); i++) {
		n = build(bad_ops[i], 0, 0);
		ck_assert_msg(rocemu_msg_check(msg, n, REQUEST) == -EOPNOTSUPP, "op %u request", bad_ops[i]);
		ck_assert_msg(rocemu_msg_check(msg, n, RESPONSE) == -EOPNOTSUPP, "op %u response", bad_ops[i]);
	}
}
END_TEST

START_TEST(test_truncated_header)
{
	build(ROCEMU_OP_SHUTDOWN, 0, 0);
	ck_assert_int_eq(rocemu_msg_check(msg, 0, REQUEST), -EPROTO);
	ck_assert_int_eq(rocemu_msg_check(msg, sizeof(struct rocemu_msg_hdr) - 1, REQUEST), -EPROTO);
	ck_assert_int_eq(rocemu_msg_check(msg, sizeof(struct rocemu_msg_hdr) - 1, RESPONSE), -EPROTO);
}
END_TEST

START_TEST(test_len_mismatch)
{
	uint32_t want = body_size(_i, REQUEST);
	size_t n = build(_i, 0, want);

	ck_assert_int_eq(rocemu_msg_check(msg, n + 4, REQUEST), -EPROTO);
	if (want)
		ck_assert_int_eq(rocemu_msg_check(msg, n - 1, REQUEST), -EPROTO);
}
END_TEST

/* ---- send / recv over a socketpair ---- */

static int open_fd_count(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int count = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			count++;
	closedir(d);
	return count - 1;	/* the directory's own fd */
}

struct three_files {
	int pipe_rd, pipe_wr, event, mem;
};

static void make_files(struct three_files *f)
{
	int p[2];

	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	f->pipe_rd = p[0];
	f->pipe_wr = p[1];
	f->event = eventfd(0, EFD_CLOEXEC);
	ck_assert_int_ge(f->event, 0);
	f->mem = memfd_create("check_ctrl", MFD_CLOEXEC);
	ck_assert_int_ge(f->mem, 0);
	ck_assert_int_eq(ftruncate(f->mem, 4096), 0);
}

static void close_files(struct three_files *f)
{
	close(f->pipe_rd);
	close(f->pipe_wr);
	close(f->event);
	close(f->mem);
}

static void assert_same_file(int a, int b)
{
	struct stat sa, sb;

	ck_assert_int_ne(a, b);
	ck_assert_int_eq(fstat(a, &sa), 0);
	ck_assert_int_eq(fstat(b, &sb), 0);
	ck_assert_uint_eq(sa.st_dev, sb.st_dev);
	ck_assert_uint_eq(sa.st_ino, sb.st_ino);
	ck_assert_int_ne(fcntl(b, F_GETFD) & FD_CLOEXEC, 0);
}

static void socketpair_seqpacket(int sv[2])
{
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
}

/* An OPEN_DEVICE response carries three descriptors: async pipe, kick eventfd, context page. */
static void send_open_device_resp(int sock, const struct three_files *f,
				  struct rocemu_open_device_resp *body)
{
	const int fds[3] = { f->pipe_rd, f->event, f->mem };
	struct rocemu_msg_hdr h;

	memset(body, 0, sizeof(*body));
	strcpy(body->dev.name, "rocemu0");
	body->dev.ipv4 = 0x0100007f;
	body->context_page_size = 4096;
	rocemu_msg_init(&h, ROCEMU_OP_OPEN_DEVICE, 3, 0, sizeof(*body));
	ck_assert_int_eq(rocemu_ctrl_send(sock, &h, body, fds, 3), 0);
}

START_TEST(test_round_trip_three_fds)
{
	struct rocemu_open_device_resp sent, *got;
	struct three_files f;
	int sv[2], fds[ROCEMU_CTRL_MAX_FDS], nfds = ROCEMU_CTRL_MAX_FDS;
	uint64_t one = 1, value = 0;
	char byte = 'x';
	ssize_t n;

	socketpair_seqpacket(sv);
	make_files(&f);
	send_open_device_resp(sv[0], &f, &sent);

	n = rocemu_ctrl_recv(sv[1], msg, sizeof(msg), fds, &nfds);
	ck_assert_int_eq(n, sizeof(struct rocemu_msg_hdr) + sizeof(sent));
	ck_assert_int_eq(rocemu_msg_check(msg, (size_t)n, RESPONSE), 0);
	ck_assert_uint_eq(HDR->op, ROCEMU_OP_OPEN_DEVICE);
	ck_assert_uint_eq(HDR->seq, 3);
	got = (struct rocemu_open_device_resp *)(msg + sizeof(struct rocemu_msg_hdr));
	ck_assert_mem_eq(got, &sent, sizeof(sent));
	ck_assert_int_eq(nfds, 3);
	assert_same_file(f.pipe_rd, fds[0]);
	assert_same_file(f.event, fds[1]);
	assert_same_file(f.mem, fds[2]);

	/* Live: what one side writes the other reads. */
	ck_assert_int_eq(write(f.pipe_wr, &byte, 1), 1);
	byte = 0;
	ck_assert_int_eq(read(fds[0], &byte, 1), 1);
	ck_assert_int_eq(byte, 'x');
	ck_assert_int_eq(write(fds[1], &one, sizeof(one)), sizeof(one));
	ck_assert_int_eq(read(f.event, &value, sizeof(value)), sizeof(value));
	ck_assert_uint_eq(value, 1);
	ck_assert_int_eq(pwrite(f.mem, "rocemu", 6, 100), 6);
	{
		char text[7] = { 0 };

		ck_assert_int_eq(pread(fds[2], text, 6, 100), 6);
		ck_assert_str_eq(text, "rocemu");
	}

	close(fds[0]);
	close(fds[1]);
	close(fds[2]);
	close_files(&f);
	close(sv[0]);
	close(sv[1]);
}
END_TEST

START_TEST(test_extra_fds_closed)
{
	struct rocemu_open_device_resp sent;
	struct three_files f;
	int sv[2], fds[1], nfds = 1, before;
	ssize_t n;

	socketpair_seqpacket(sv);
	make_files(&f);
	before = open_fd_count();
	send_open_device_resp(sv[0], &f, &sent);
	n = rocemu_ctrl_recv(sv[1], msg, sizeof(msg), fds, &nfds);
	ck_assert_int_eq(n, sizeof(struct rocemu_msg_hdr) + sizeof(sent));
	ck_assert_int_eq(nfds, 1);
	assert_same_file(f.pipe_rd, fds[0]);
	ck_assert_int_eq(open_fd_count(), before + 1);
	close(fds[0]);
	close_files(&f);
	close(sv[0]);
	close(sv[1]);
}
END_TEST

START_TEST(test_small_buffer_emsgsize_no_leak)
{
	struct rocemu_open_device_resp sent;
	struct three_files f;
	int sv[2], fds[ROCEMU_CTRL_MAX_FDS], nfds = ROCEMU_CTRL_MAX_FDS, before;

	socketpair_seqpacket(sv);
	make_files(&f);
	before = open_fd_count();
	send_open_device_resp(sv[0], &f, &sent);
	ck_assert_int_eq(rocemu_ctrl_recv(sv[1], msg, sizeof(struct rocemu_msg_hdr), fds, &nfds),
			 -EMSGSIZE);
	ck_assert_int_eq(nfds, 0);
	ck_assert_int_eq(open_fd_count(), before);
	close_files(&f);
	close(sv[0]);
	close(sv[1]);
}
END_TEST

START_TEST(test_message_without_body_or_fds)
{
	struct rocemu_msg_hdr h;
	int sv[2], fds[ROCEMU_CTRL_MAX_FDS], nfds = ROCEMU_CTRL_MAX_FDS;
	ssize_t n;

	socketpair_seqpacket(sv);
	rocemu_msg_init(&h, ROCEMU_OP_SHUTDOWN, 9, 0, 0);
	ck_assert_int_eq(rocemu_ctrl_send(sv[0], &h, NULL, NULL, 0), 0);
	n = rocemu_ctrl_recv(sv[1], msg, sizeof(msg), fds, &nfds);
	ck_assert_int_eq(n, sizeof(h));
	ck_assert_int_eq(nfds, 0);
	ck_assert_int_eq(rocemu_msg_check(msg, (size_t)n, REQUEST), 0);
	close(sv[0]);
	ck_assert_int_eq(rocemu_ctrl_recv(sv[1], msg, sizeof(msg), fds, &nfds), 0);
	close(sv[1]);
}
END_TEST

START_TEST(test_too_many_fds_refused)
{
	struct rocemu_msg_hdr h;
	int sv[2], fds[ROCEMU_CTRL_MAX_FDS + 1] = { 0 };

	socketpair_seqpacket(sv);
	rocemu_msg_init(&h, ROCEMU_OP_SHUTDOWN, 1, 0, 0);
	ck_assert_int_eq(rocemu_ctrl_send(sv[0], &h, NULL, fds, ROCEMU_CTRL_MAX_FDS + 1), -EINVAL);
	close(sv[0]);
	close(sv[1]);
}
END_TEST

/* ---- whom to trust: the runtime directory and the peer ---- */

static char scratch[64];

static void scratch_setup(void)
{
	strcpy(scratch, "/tmp/check_ctrl.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(scratch));
}

static void scratch_teardown(void)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/link", scratch);
	unlink(path);
	snprintf(path, sizeof(path), "%s/dir", scratch);
	rmdir(path);
	rmdir(scratch);
}

START_TEST(test_runtime_dir_made_0700)
{
	char dir[128], why[ROCEMU_TRUST_WHY_MAX] = "";
	struct stat st;
	mode_t old = umask(0);

	snprintf(dir, sizeof(dir), "%s/dir", scratch);
	ck_assert_int_eq(rocemu_runtime_dir_make(dir, why, sizeof(why)), 0);
	umask(old);
	ck_assert_int_eq(stat(dir, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0700);
	ck_assert_int_eq(rocemu_runtime_dir_check(dir, why, sizeof(why)), 0);
}
END_TEST

START_TEST(test_runtime_dir_refused)
{
	char dir[128], link[128], why[ROCEMU_TRUST_WHY_MAX] = "";

	snprintf(dir, sizeof(dir), "%s/dir", scratch);
	ck_assert_int_eq(rocemu_runtime_dir_check(dir, why, sizeof(why)), -ENOENT);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	ck_assert_int_eq(chmod(dir, 0755), 0);
	ck_assert_int_eq(rocemu_runtime_dir_check(dir, why, sizeof(why)), -EPERM);
	ck_assert_str_eq(why, "has mode 0755, not 0700 (others could replace the socket)");
	ck_assert_int_eq(rocemu_runtime_dir_make(dir, why, sizeof(why)), -EPERM);
	ck_assert_int_eq(chmod(dir, 0700), 0);
	snprintf(link, sizeof(link), "%s/link", scratch);
	ck_assert_int_eq(symlink(dir, link), 0);
	ck_assert_int_eq(rocemu_runtime_dir_check(link, why, sizeof(why)), -EPERM);
	ck_assert_str_eq(why, "is a symbolic link");
}
END_TEST

START_TEST(test_runtime_dir_default)
{
	char dir[128], want[64];

	unsetenv("ROCEMU_RUNTIME_DIR");
	unsetenv("XDG_RUNTIME_DIR");
	ck_assert_int_eq(rocemu_runtime_dir(dir, sizeof(dir)), 0);
	snprintf(want, sizeof(want), "/tmp/rocemu-%u", (unsigned)getuid());
	ck_assert_str_eq(dir, want);
	setenv("XDG_RUNTIME_DIR", "/run/user/7", 1);
	ck_assert_int_eq(rocemu_runtime_dir(dir, sizeof(dir)), 0);
	ck_assert_str_eq(dir, "/run/user/7/rocemu");
	setenv("ROCEMU_RUNTIME_DIR", "/somewhere", 1);
	ck_assert_int_eq(rocemu_runtime_dir(dir, sizeof(dir)), 0);
	ck_assert_str_eq(dir, "/somewhere");
}
END_TEST

/* Our own process at the other end is trusted; the rule is this user or root. */
START_TEST(test_peer_check)
{
	char why[ROCEMU_TRUST_WHY_MAX] = "";
	int sv[2];

	socketpair_seqpacket(sv);
	ck_assert_int_eq(rocemu_peer_check(sv[0], why, sizeof(why)), 0);
	close(sv[0]);
	close(sv[1]);
	ck_assert(rocemu_peer_trusted(getuid()));
	ck_assert(rocemu_peer_trusted(0));
	ck_assert(!rocemu_peer_trusted(getuid() == 1 ? 2 : 1));
}
END_TEST

static Suite *ctrl_suite(void)
{
	Suite *s = suite_create("ctrl");
	TCase *check = tcase_create("msg_check");
	TCase *io = tcase_create("send_recv");
	TCase *trust = tcase_create("trust");

	tcase_add_test(check, test_init_fills_header);
	tcase_add_loop_test(check, test_every_op_request_size_accepted, ROCEMU_OP_HELLO, ROCEMU_OP__COUNT);
	tcase_add_loop_test(check, test_every_op_response_size_accepted, ROCEMU_OP_HELLO, ROCEMU_OP__COUNT);
	tcase_add_loop_test(check, test_every_op_has_a_name, ROCEMU_OP_HELLO, ROCEMU_OP__COUNT);
	tcase_add_loop_test(check, test_wrong_body_size, ROCEMU_OP_HELLO, ROCEMU_OP__COUNT);
	tcase_add_loop_test(check, test_error_response_empty_body, ROCEMU_OP_HELLO, ROCEMU_OP__COUNT);
	tcase_add_loop_test(check, test_len_mismatch, ROCEMU_OP_HELLO, ROCEMU_OP__COUNT);
	tcase_add_test(check, test_varlen_limits);
	tcase_add_test(check, test_wrong_magic);
	tcase_add_test(check, test_wrong_version);
	tcase_add_test(check, test_unknown_op);
	tcase_add_test(check, test_truncated_header);
	suite_add_tcase(s, check);

	tcase_add_test(io, test_round_trip_three_fds);
	tcase_add_test(io, test_extra_fds_closed);
	tcase_add_test(io, test_small_buffer_emsgsize_no_leak);
	tcase_add_test(io, test_message_without_body_or_fds);
	tcase_add_test(io, test_too_many_fds_refused);
	suite_add_tcase(s, io);

	tcase_add_checked_fixture(trust, scratch_setup, scratch_teardown);
	tcase_add_test(trust, test_runtime_dir_made_0700);
	tcase_add_test(trust, test_runtime_dir_refused);
	tcase_add_test(trust, test_runtime_dir_default);
	tcase_add_test(trust, test_peer_check);
	suite_add_tcase(s, trust);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(ctrl_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
