/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The recording daemon connection of daemon_conn.h.
 */
#include "lib/shim.h"

#include <check.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tests/unit/verbs/daemon_conn.h"

/* Bodies aligned as the structs read from them need. */
struct op_record {
	int status;
	_Alignas(max_align_t) unsigned char resp[CONN_BODY_MAX];
	uint64_t memfd_size;
	unsigned char fill[CONN_BODY_MAX];
	uint64_t fill_offset;
	size_t fill_len;
	int calls;
	_Alignas(max_align_t) unsigned char last[CONN_BODY_MAX];
	int last_fd;
};

static struct op_record records[ROCEMU_OP__COUNT];
static int calls_all;

void conn_reset(void)
{
	memset(records, 0, sizeof(records));
	for (size_t i = 0; i < ROCEMU_OP__COUNT; i++)
		records[i].last_fd = -1;
	calls_all = 0;
}

void conn_answer(enum rocemu_ctrl_op op, int status, const void *resp, size_t len,
		 uint64_t memfd_size)
{
	ck_assert_uint_le(len, CONN_BODY_MAX);
	records[op].status = status;
	memset(records[op].resp, 0, sizeof(records[op].resp));
	if (resp)
		memcpy(records[op].resp, resp, len);
	records[op].memfd_size = memfd_size;
}

void conn_answer_fill(enum rocemu_ctrl_op op, uint64_t offset, const void *data, size_t len)
{
	ck_assert_uint_le(len, CONN_BODY_MAX);
	memcpy(records[op].fill, data, len);
	records[op].fill_offset = offset;
	records[op].fill_len = len;
}

int conn_calls(enum rocemu_ctrl_op op)
{
	return records[op].calls;
}

int conn_calls_all(void)
{
	return calls_all;
}

const void *conn_last(enum rocemu_ctrl_op op)
{
	return records[op].last;
}

int conn_last_fd(enum rocemu_ctrl_op op)
{
	return records[op].last_fd;
}

/* A memfd of r's size holding r's fill, as the daemon hands rings over. */
static int memfd_of(const struct op_record *r)
{
	int fd = memfd_create("daemon_conn", MFD_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, (off_t)(r->memfd_size ? r->memfd_size : 4096)), 0);
	if (r->fill_len)
		ck_assert_int_eq(pwrite(fd, r->fill, r->fill_len, (off_t)r->fill_offset),
				 (ssize_t)r->fill_len);
	return fd;
}

static int answer(enum rocemu_ctrl_op op, const void *req, void *resp, int *fds, int nfds,
		  int send_fd)
{
	struct op_record *r;
	uint32_t req_len, resp_len;

	ck_assert_int_gt(op, 0);
	ck_assert_int_lt(op, ROCEMU_OP__COUNT);
	r = &records[op];
	req_len = rocemu_ctrl_body_size[op][0];
	resp_len = rocemu_ctrl_body_size[op][1];
	ck_assert_uint_le(req_len, CONN_BODY_MAX);
	/* A request with a body has one, and an answer with one has room for it. */
	ck_assert(!req_len || req);
	ck_assert(!resp_len || resp);
	r->calls++;
	calls_all++;
	memset(r->last, 0, sizeof(r->last));
	if (req_len)
		memcpy(r->last, req, req_len);
	r->last_fd = send_fd;
	if (r->status)
		return r->status;
	if (resp_len)
		memcpy(resp, r->resp, resp_len);
	for (int i = 0; i < nfds; i++)
		fds[i] = memfd_of(r);
	return 0;
}

int rocemu_conn_call(struct rocemu_conn *conn, enum rocemu_ctrl_op op, const void *req,
		     void *resp, int *fds, int nfds)
{
	ck_assert_ptr_nonnull(conn);
	ck_assert_int_le(nfds, ROCEMU_CTRL_MAX_FDS);
	return answer(op, req, resp, fds, nfds, -1);
}

int rocemu_conn_call_fd(struct rocemu_conn *conn, enum rocemu_ctrl_op op, const void *req,
			void *resp, int send_fd)
{
	ck_assert_ptr_nonnull(conn);
	return answer(op, req, resp, NULL, 0, send_fd);
}

/*
 * lib/verbs/context.c's mapping of a daemon memfd, for the suites that
 * leave context.c out: the same shared mapping, the fd closed. Weak, so
 * that a suite compiling context.c in tests that one.
 */
__attribute__((weak)) void *rocemu_map_shared(int fd, uint64_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	close(fd);
	return p == MAP_FAILED ? NULL : p;
}
