/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* `rocemu trace [DEV] [--qp QPN] [--kind LIST]`: the daemon's events, live, until Ctrl-C. */
#include "tools/trace_cmd.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rocemu/ctrl_io.h"
#include "tools/cli_ctrl.h"

#define LINE_BYTES 512

static const struct {
	const char *name;
	uint32_t bit;
} kinds[] = {
	{ "packet", ROCEMU_TRACE_PACKET }, { "qp", ROCEMU_TRACE_QP },
	{ "cqe", ROCEMU_TRACE_CQE }, { "async", ROCEMU_TRACE_ASYNC },
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* "packet,cqe" -> bits; 0 for a word that names no kind. */
static uint32_t kinds_parse(const char *list)
{
	char *copy = strdup(list), *word, *save = NULL;
	uint32_t bits = 0;
	size_t i;

	for (word = copy ? strtok_r(copy, ",", &save) : NULL; word; word = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]) && strcmp(kinds[i].name, word); i++)
			;
		if (i == sizeof(kinds) / sizeof(kinds[0])) {
			bits = 0;
			break;
		}
		bits |= kinds[i].bit;
	}
	free(copy);
	return bits;
}

static int parse(int argc, char **argv, struct rocemu_trace_req *req)
{
	char *end;
	int i;

	*req = (struct rocemu_trace_req){ .qpn = ROCEMU_TRACE_ANY_QP, .kinds = ROCEMU_TRACE_ALL };
	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--qp") && i + 1 < argc) {
			unsigned long qpn;

			errno = 0;
			qpn = strtoul(argv[++i], &end, 0);
			if (errno || *end || end == argv[i] || qpn > 0xffffff)
				return -1;
			req->qpn = (uint32_t)qpn;
		} else if (!strcmp(argv[i], "--kind") && i + 1 < argc) {
			req->kinds = kinds_parse(argv[++i]);
			if (!req->kinds)
				return -1;
		} else if (argv[i][0] != '-' && !req->dev_name[0] &&
			   strlen(argv[i]) < sizeof(req->dev_name)) {
			memcpy(req->dev_name, argv[i], strlen(argv[i]));
		} else {
			return -1;
		}
	}
	return 0;
}

/* Print each line the daemon sends until it goes or a signal comes. */
static void follow(int fd)
{
	struct sigaction sa = { .sa_handler = on_signal };
	char line[LINE_BYTES];
	ssize_t n;

	/* No SA_RESTART: a signal ends the wait. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);
	while (!stop) {
		n = recv(fd, line, sizeof(line), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		fwrite(line, 1, (size_t)n, stdout);
	}
	/* Stopped: what the daemon sent before is still printed. */
	while ((n = recv(fd, line, sizeof(line), MSG_DONTWAIT)) > 0)
		fwrite(line, 1, (size_t)n, stdout);
}

int trace_command(int argc, char **argv)
{
	struct rocemu_trace_req req;
	char dir[PATH_MAX];
	int sock, fd, ret;

	if (parse(argc, argv, &req)) {
		fprintf(stderr, "usage: rocemu trace [DEV] [--qp QPN] [--kind packet,qp,cqe,async]\n");
		return 2;
	}
	if (runtime_dir_or_die(dir, sizeof(dir)))
		return 1;
	sock = ctrl_open(dir);
	if (sock < 0)
		return command_failed(dir, sock, "trace");
	ret = ctrl_ask(sock, ROCEMU_OP_TRACE, &req, sizeof(req), &fd);
	if (ret == -ENODEV)
		fprintf(stderr, "rocemu: no device %s\n", req.dev_name);
	else if (ret == -EBUSY)
		fprintf(stderr, "rocemu: trace: the daemon serves as many traces as it takes\n");
	else if (ret)
		command_failed(dir, ret, "trace");
	if (!ret) {
		fprintf(stderr, "rocemu: tracing %s; Ctrl-C stops\n",
			req.dev_name[0] ? req.dev_name : "every device");
		follow(fd);
		close(fd);
	}
	/* The daemon ends the trace with this connection. */
	close(sock);
	return ret ? 1 : 0;
}
