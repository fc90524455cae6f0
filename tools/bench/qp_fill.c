/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * qp_fill: hold N RC QPs in RTS so that the memory a QP costs can be read.
 *   qp_fill -n N [-d DEV]
 * Creates N RC QPs with perftest's default send depth (ib_write_bw's tx_depth
 * 128, one SGE, no inline) and as many receive WQEs, on one PD and one CQ,
 * connects QP 2i with QP 2i+1 (an odd last one with itself) on the same device (GID index 0, MTU 1024, as
 * ibv_rc_pingpong -g 0 does), moves all to RTS, prints "ready qps=N" and
 * waits until stdin reaches end of file or SIGTERM/SIGINT arrives; then
 * destroys everything and exits 0. Any failure: one line on stderr, exit 1.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#define QP_DEPTH 128		/* perftest's default tx_depth */
#define GID_INDEX 0
#define CQ_DEPTH 4096
#define MR_BYTES 4096
#define PSN 0x1000

static volatile sig_atomic_t stop_signal;

static void on_stop(int sig)
{
	stop_signal = sig;
}

static void die(const char *what, long qp)
{
	if (qp >= 0)
		fprintf(stderr, "qp_fill: %s (QP %ld): %s\n", what, qp, strerror(errno));
	else
		fprintf(stderr, "qp_fill: %s: %s\n", what, strerror(errno));
	exit(1);
}

static struct ibv_context *open_device(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	if (!list)
		die("ibv_get_device_list", -1);
	errno = ENODEV;		/* unless ibv_open_device says otherwise */
	for (i = 0; list[i] && !ctx; i++)
		if (!name || !strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	if (!ctx)
		die(name ? name : "first device", -1);
	ibv_free_device_list(list);
	return ctx;
}

static void to_init(struct ibv_qp *qp, long i)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE,
	};

	errno = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					 IBV_QP_ACCESS_FLAGS);
	if (errno)
		die("modify to INIT", i);
}

/* qp (number i) to RTR then RTS, connected to dest_qpn through gid. */
static void to_rts(struct ibv_qp *qp, long i, uint32_t dest_qpn, const union ibv_gid *gid)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = IBV_MTU_1024,
		.dest_qp_num = dest_qpn,
		.rq_psn = PSN,
		.max_dest_rd_atomic = 1,
		.min_rnr_timer = 12,
		.ah_attr = {
			.is_global = 1,
			.grh = { .dgid = *gid, .sgid_index = GID_INDEX, .hop_limit = 1 },
			.port_num = 1,
		},
	};

	errno = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
					 IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
					 IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	if (errno)
		die("modify to RTR", i);
	attr = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTS,
		.timeout = 14,
		.retry_cnt = 7,
		.rnr_retry = 7,
		.sq_psn = PSN,
		.max_rd_atomic = 1,
	};
	errno = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
					 IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
	if (errno)
		die("modify to RTS", i);
}

/* Until stdin ends or a stop signal came (its handler interrupts read). */
static void wait_release(void)
{
	char buf[64];
	ssize_t n;

	while (!stop_signal) {
		n = read(STDIN_FILENO, buf, sizeof(buf));
		if (n == 0 || (n < 0 && errno != EINTR))
			return;
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: qp_fill -n N [-d DEV]\n");
	exit(1);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_stop };	/* no SA_RESTART: read returns */
	const char *dev_name = NULL;
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = QP_DEPTH, .max_recv_wr = QP_DEPTH,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_context *ctx;
	struct ibv_qp **qps;
	union ibv_gid gid;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	void *buf;
	long n = 0, i;
	char *end;
	int opt;

	while ((opt = getopt(argc, argv, "n:d:")) != -1) {
		if (opt == 'n') {
			n = strtol(optarg, &end, 10);
			if (*end || n <= 0)
				usage();
		} else if (opt == 'd') {
			dev_name = optarg;
		} else {
			usage();
		}
	}
	if (!n || optind != argc)
		usage();
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	ctx = open_device(dev_name);
	if (ibv_query_gid(ctx, 1, GID_INDEX, &gid))
		die("ibv_query_gid", -1);
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		die("ibv_alloc_pd", -1);
	buf = calloc(1, MR_BYTES);
	mr = buf ? ibv_reg_mr(pd, buf, MR_BYTES, IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!mr)
		die("ibv_reg_mr", -1);
	cq = ibv_create_cq(ctx, CQ_DEPTH, NULL, NULL, 0);
	if (!cq)
		die("ibv_create_cq", -1);
	qps = calloc((size_t)n, sizeof(*qps));
	if (!qps)
		die("calloc", -1);
	init.send_cq = cq;
	init.recv_cq = cq;
	for (i = 0; i < n; i++) {
		qps[i] = ibv_create_qp(pd, &init);
		if (!qps[i])
			die("ibv_create_qp", i);
		to_init(qps[i], i);
	}
	for (i = 0; i < n; i++)
		to_rts(qps[i], i, qps[(i ^ 1) < n ? i ^ 1 : i]->qp_num, &gid);
	printf("ready qps=%ld\n", n);
	fflush(stdout);

	wait_release();
	for (i = 0; i < n; i++)
		if ((errno = ibv_destroy_qp(qps[i])))
			die("ibv_destroy_qp", i);
	free(qps);
	if ((errno = ibv_destroy_cq(cq)) || (errno = ibv_dereg_mr(mr)) ||
	    (errno = ibv_dealloc_pd(pd)) || ibv_close_device(ctx))
		die("teardown", -1);
	free(buf);
	return 0;
}
