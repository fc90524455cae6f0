/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The command line's side of the control protocol: connect, ask, report failures. */
#include "tools/cli_ctrl.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rocemu/ctrl_io.h"

/* The runtime dir; a name too long is reported. */
int runtime_dir_or_die(char *dir, size_t len)
{
	int ret = rocemu_runtime_dir(dir, len);

	if (ret) {
		fprintf(stderr, "rocemu: runtime directory name too long\n");
		return ret;
	}
	return 0;
}

/* Say once why we do not talk to the daemon of dir. */
void untrusted(const char *dir, const char *why)
{
	static bool said;

	if (!said)
		fprintf(stderr, "rocemu: runtime directory %s: %s: not talking to the daemon there\n",
			dir, why);
	said = true;
}

/* Connect to the daemon of dir, if we trust it (a directory or daemon we do not is reported). */
int ctrl_open(const char *dir)
{
	char why[ROCEMU_TRUST_WHY_MAX];
	int sock = rocemu_ctrl_connect(dir, why, sizeof(why));

	if (sock == -EPERM)
		untrusted(dir, why);
	return sock;
}

/*
 * Request op (seq) on sock, and receive the response into buf (header and
 * up to ROCEMU_CTRL_MSG_MAX bytes of body; *len gets the body's length).
 * Returns the response status, or -errno when no valid answer came.
 */
int ctrl_exchange(int sock, uint16_t op, uint32_t seq, const void *req, uint32_t req_len,
		  void *buf, uint32_t *len, int *fd)
{
	const struct rocemu_msg_hdr *resp = buf;
	struct rocemu_msg_hdr hdr;
	int ret, nfds = 1;
	ssize_t n;

	if (fd)
		*fd = -1;
	rocemu_msg_init(&hdr, op, seq, 0, req_len);
	ret = rocemu_ctrl_send(sock, &hdr, req, NULL, 0);
	if (ret)
		return ret;
	n = rocemu_ctrl_recv(sock, buf, sizeof(hdr) + ROCEMU_CTRL_MSG_MAX, fd, fd ? &nfds : NULL);
	if (n <= 0)
		return n ? (int)n : -ECONNRESET;
	ret = rocemu_msg_check(buf, (size_t)n, 1);
	if (ret) {
		if (fd && *fd >= 0)
			close(*fd);
		return ret;
	}
	if (resp->op != op || resp->seq != seq || (fd && !resp->status && nfds != 1))
		ret = -EPROTO;
	else
		ret = resp->status;
	if (ret && fd && *fd >= 0) {
		close(*fd);
		*fd = -1;
	}
	*len = resp->len;
	return ret;
}

int ctrl_ask(int sock, uint16_t op, const void *req, uint32_t req_len, int *fd)
{
	uint8_t *buf = malloc(sizeof(struct rocemu_msg_hdr) + ROCEMU_CTRL_MSG_MAX);
	uint32_t len = 0;
	int ret = buf ? ctrl_exchange(sock, op, 1, req, req_len, buf, &len, fd) : -ENOMEM;

	free(buf);
	return ret;
}

/*
 * One request/response on a connection of its own with the daemon of dir.
 * resp gets the body (up to resp_len bytes). Returns the response status,
 * or -errno when no answer came (-ECONNREFUSED / -ENOENT: no daemon;
 * -EPERM: not trusted, reported).
 */
int ctrl_call(const char *dir, uint16_t op, const void *req, uint32_t req_len,
		     void *resp, size_t resp_len)
{
	uint32_t len = 0;
	uint8_t *buf;
	int sock, ret;

	sock = ctrl_open(dir);
	if (sock < 0)
		return sock;
	buf = malloc(sizeof(struct rocemu_msg_hdr) + ROCEMU_CTRL_MSG_MAX);
	ret = buf ? ctrl_exchange(sock, op, 1, req, req_len, buf, &len, NULL) : -ENOMEM;
	if (!ret && resp)
		memcpy(resp, buf + sizeof(struct rocemu_msg_hdr), len < resp_len ? len : resp_len);
	free(buf);
	close(sock);
	return ret;
}

/* The pid of the daemon answering HELLO in dir into *pid; returns as ctrl_call. */
int daemon_hello(const char *dir, pid_t *pid)
{
	struct rocemu_hello_req req = { .pid = (uint32_t)getpid() };
	struct rocemu_hello_resp resp;
	int ret;

	ret = ctrl_call(dir, ROCEMU_OP_HELLO, &req, sizeof(req), &resp, sizeof(resp));
	if (!ret)
		*pid = (pid_t)resp.daemon_pid;
	return ret;
}

void no_daemon(const char *dir)
{
	fprintf(stderr, "rocemu: no daemon is running (nothing answers on %s/%s)\n",
		dir, ROCEMU_CTRL_SOCKET);
}

/* Report the failure ret of command what on the daemon of dir; the exit status. */
int command_failed(const char *dir, int ret, const char *what)
{
	if (ret == -ECONNREFUSED || ret == -ENOENT)
		no_daemon(dir);
	else if (ret != -EPERM)	/* said by ctrl_open */
		fprintf(stderr, "rocemu: %s: %s\n", what, strerror(-ret));
	return 1;
}

/*
 * Print the text report of op page by page, as the daemon hands it out:
 * the pages of one connection come from one snapshot, whatever its size.
 */
int text_pages_print(int sock, uint16_t op, FILE *out)
{
	const struct rocemu_text_resp *page;
	uint64_t offset = 0, total = 0;
	uint32_t seq, len;
	uint8_t *buf;
	size_t text_len;
	int ret = 0;

	buf = malloc(sizeof(struct rocemu_msg_hdr) + ROCEMU_CTRL_MSG_MAX);
	if (!buf)
		return -ENOMEM;
	page = (const void *)(buf + sizeof(struct rocemu_msg_hdr));
	for (seq = 1; !ret; seq++) {
		struct rocemu_text_req req = { .offset = offset };

		ret = ctrl_exchange(sock, op, seq, &req, sizeof(req), buf, &len, NULL);
		if (ret)
			break;
		text_len = len - sizeof(*page);	/* rocemu_msg_check saw the page header */
		if (seq == 1)
			total = page->total;
		if (page->total != total || text_len > total - offset ||
		    (!text_len && offset < total)) {
			ret = -EPROTO;
			break;
		}
		fwrite(page->text, 1, text_len, out);
		offset += text_len;
		if (offset == total)
			break;
	}
	free(buf);
	return ret;
}

/* A command whose answer is a text report (STATUS, STATS), printed to out. */
int cmd_text(uint16_t op, const char *name, FILE *out)
{
	char dir[PATH_MAX];
	int sock, ret;

	if (runtime_dir_or_die(dir, sizeof(dir)))
		return 1;
	sock = ctrl_open(dir);
	if (sock < 0)
		return command_failed(dir, sock, name);
	ret = text_pages_print(sock, op, out);
	close(sock);
	return ret ? command_failed(dir, ret, name) : 0;
}

