/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The command line's side of the control protocol (include/rocemu/ctrl_io.h):
 * the runtime directory, connections to its daemon, one request and its
 * answer, paged text reports, and the words for a failure.
 */
#ifndef ROCEMU_TOOLS_CLI_CTRL_H
#define ROCEMU_TOOLS_CLI_CTRL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* The runtime dir; a name too long is reported. */
int runtime_dir_or_die(char *dir, size_t len);

/* Say once why we do not talk to the daemon of dir. */
void untrusted(const char *dir, const char *why);

/* Connect to the daemon of dir, if we trust it (a directory or daemon we do not is reported). */
int ctrl_open(const char *dir);

/*
 * Request op (seq) on sock, and receive the response into buf (header and
 * up to ROCEMU_CTRL_MSG_MAX bytes of body; *len gets the body's length);
 * with fd, the one descriptor a successful answer carries (else -1).
 * Returns the response status, or -errno when no valid answer came.
 */
int ctrl_exchange(int sock, uint16_t op, uint32_t seq, const void *req, uint32_t req_len,
		  void *buf, uint32_t *len, int *fd);

/* Request op on sock and return the answer's status; fd as ctrl_exchange's. */
int ctrl_ask(int sock, uint16_t op, const void *req, uint32_t req_len, int *fd);

/*
 * One request/response on a connection of its own with the daemon of dir.
 * resp gets the body (up to resp_len bytes). Returns the response status,
 * or -errno when no answer came (-ECONNREFUSED / -ENOENT: no daemon;
 * -EPERM: not trusted, reported).
 */
int ctrl_call(const char *dir, uint16_t op, const void *req, uint32_t req_len, void *resp,
	      size_t resp_len);

/* The pid of the daemon answering HELLO in dir into *pid; returns as ctrl_call. */
int daemon_hello(const char *dir, pid_t *pid);

void no_daemon(const char *dir);

/* Report the failure ret of command what on the daemon of dir; the exit status. */
int command_failed(const char *dir, int ret, const char *what);

/* Print the text report of op page by page to out; 0 or -errno. */
int text_pages_print(int sock, uint16_t op, FILE *out);

/* A command whose answer is a text report (STATUS, STATS), printed to out; the exit status. */
int cmd_text(uint16_t op, const char *name, FILE *out);

#endif /* ROCEMU_TOOLS_CLI_CTRL_H */
