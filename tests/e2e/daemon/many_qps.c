/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Hold COUNT RC QPs on DEVICE so that the daemon has a large status report:
 *   many_qps DEVICE COUNT   create them, print "ready COUNT", wait until stdin closes
 * Exit 0 once stdin closed with every QP created; 1 (with the reason) otherwise.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

static struct ibv_context *open_by_name(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	return ctx;
}

/* Block until stdin reaches end of file (the test closes it, or dies). */
static void wait_stdin_closed(void)
{
	char buf[64];

	while (read(STDIN_FILENO, buf, sizeof(buf)) > 0 || errno == EINTR)
		errno = 0;
}

int main(int argc, char **argv)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_context *ctx;
	struct ibv_qp **qps;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	long count, i;

	if (argc != 3 || (count = strtol(argv[2], NULL, 10)) <= 0) {
		fprintf(stderr, "usage: %s DEVICE COUNT\n", argv[0]);
		return 1;
	}
	ctx = open_by_name(argv[1]);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	cq = pd ? ibv_create_cq(ctx, 1, NULL, NULL, 0) : NULL;
	qps = calloc((size_t)count, sizeof(*qps));
	if (!cq || !qps) {
		fprintf(stderr, "%s: device, PD or CQ: %s\n", argv[1], strerror(errno));
		return 1;
	}
	init.send_cq = cq;
	init.recv_cq = cq;
	for (i = 0; i < count; i++) {
		qps[i] = ibv_create_qp(pd, &init);
		if (!qps[i]) {
			fprintf(stderr, "create_qp %ld of %ld: %s\n", i + 1, count, strerror(errno));
			return 1;
		}
	}
	printf("ready %ld\n", count);
	fflush(stdout);
	wait_stdin_closed();
	for (i = 0; i < count; i++)
		ibv_destroy_qp(qps[i]);
	free(qps);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return 0;
}
