/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The daemon's side of the control connection for the suites of
 * lib/verbs/: rocemu_conn_call and rocemu_conn_call_fd answer as the
 * test set them to, and keep each request as the shim sent it, so that a
 * suite checks what the shim asked for (the request's fields, from the
 * verbs attributes) and how it took the answer. Bodies are as long as
 * ctrl.h's rocemu_ctrl_body_size says; fds answered are memfds of the
 * size set, as the daemon's rings are.
 */
#ifndef ROCEMU_TESTS_UNIT_VERBS_DAEMON_CONN_H
#define ROCEMU_TESTS_UNIT_VERBS_DAEMON_CONN_H

#include <stddef.h>
#include <stdint.h>

#include "rocemu/ctrl.h"

/* The largest body fits: an indirection table of 2048 WQ numbers, a flow of 1 KiB of specs. */
#define CONN_BODY_MAX (16 * 1024)

/* Forget every request and answer: each op is answered 0 with a zeroed body and no memfd. */
void conn_reset(void);
/* Answer requests of op with status (0 or -errno), resp (len bytes, NULL: zeroes) and memfds of memfd_size. */
void conn_answer(enum rocemu_ctrl_op op, int status, const void *resp, size_t len,
		 uint64_t memfd_size);
/* The memfds answered to op hold data at offset (what the daemon wrote there before answering). */
void conn_answer_fill(enum rocemu_ctrl_op op, uint64_t offset, const void *data, size_t len);
/* Requests of op the daemon got. */
int conn_calls(enum rocemu_ctrl_op op);
/* All requests. */
int conn_calls_all(void);
/* The body of the last request of op (zeroes if none). */
const void *conn_last(enum rocemu_ctrl_op op);
/* The fd the last request of op carried along (rocemu_conn_call_fd), -1 for none. */
int conn_last_fd(enum rocemu_ctrl_op op);

#endif /* ROCEMU_TESTS_UNIT_VERBS_DAEMON_CONN_H */
