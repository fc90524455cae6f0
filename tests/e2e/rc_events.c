/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * QP states and async events through the public verbs API: RNR retry
 * exhausted and recovered, COMM_EST, the SQD drain with SQ_DRAINED, CQ
 * overrun (CQ_ERR), a responder's access error and invalid request
 * (QP_ACCESS_ERR, QP_REQ_ERR), the local ACK timeout when the peer's
 * daemon is gone (RETRY_EXC_ERR, QP_FATAL, flush), DEVICE_FATAL when our
 * own daemon dies, PORT_ERR/PORT_ACTIVE.
 * Every wait is a bounded poll; nothing depends on how long anything takes.
 *
 *   rc_events local DEV_A DEV_B          checks between two devices of one daemon
 *   rc_events retry DEV_A DEV_B DIR_B PID_B
 *                                        DEV_B lives in the daemon PID_B of runtime
 *                                        dir DIR_B; it is killed mid-test
 *   rc_events fatal DEV PID              the daemon PID of DEV is killed
 *   rc_events port DEV ROCEMU            `ROCEMU down/up DEV` while we listen
 *
 * One line per check, then "N passed" and "N failed"; exit 0 when none failed.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#define WAIT_MS 10000		/* an event or completion later than this counts as missing */
#define QUIET_MS 100		/* how long nothing must happen where nothing may */
#define BUF_SIZE 4096
#define DEPTH 16
#define PSN_A 0x000100
#define PSN_B 0x000200

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	union ibv_gid gid;
	struct ibv_cq *send_cq, *recv_cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
};

/* How a QP is connected: the knobs the checks turn. */
struct knobs {
	uint8_t timeout, retry_cnt, rnr_retry, min_rnr_timer;
	bool stop_at_rtr;
};

static const struct knobs default_knobs = { .timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
					    .min_rnr_timer = 1 };
static int passed, failed;

static void __attribute__((format(printf, 2, 3)))
check(bool ok, const char *fmt, ...)
{
	va_list ap;

	fputs(ok ? "ok: " : "FAIL: ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	if (ok)
		passed++;
	else
		failed++;
}

static int finish(void)
{
	printf("%d passed\n%d failed\n", passed, failed);
	return failed ? 1 : 0;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* ---- devices, QPs ---- */

static struct ibv_context *open_by_name(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;

	for (int i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	return ctx;
}

static bool side_open(struct side *s, const char *name)
{
	memset(s, 0, sizeof(*s));
	s->ctx = open_by_name(name);
	if (!s->ctx) {
		check(false, "open %s: %s", name, strerror(errno));
		return false;
	}
	s->pd = ibv_alloc_pd(s->ctx);
	s->buf = calloc(1, BUF_SIZE);
	if (!s->pd || !s->buf || ibv_query_gid(s->ctx, 1, 0, &s->gid)) {
		check(false, "%s: PD and GID: %s", name, strerror(errno));
		return false;
	}
	s->mr = ibv_reg_mr(s->pd, s->buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!s->mr) {
		check(false, "%s: reg_mr: %s", name, strerror(errno));
		return false;
	}
	return true;
}

/* A fresh QP (and CQs) on s; send_cqe: size of the send CQ. */
static bool qp_new(struct side *s, int send_cqe)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = DEPTH, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};

	s->send_cq = ibv_create_cq(s->ctx, send_cqe, NULL, NULL, 0);
	s->recv_cq = ibv_create_cq(s->ctx, 4 * DEPTH, NULL, NULL, 0);
	if (!s->send_cq || !s->recv_cq) {
		check(false, "create_cq: %s", strerror(errno));
		return false;
	}
	init.send_cq = s->send_cq;
	init.recv_cq = s->recv_cq;
	s->qp = ibv_create_qp(s->pd, &init);
	if (!s->qp)
		check(false, "create_qp: %s", strerror(errno));
	return s->qp != NULL;
}

static void qp_free(struct side *s)
{
	if (s->qp)
		ibv_destroy_qp(s->qp);
	if (s->send_cq)
		ibv_destroy_cq(s->send_cq);
	if (s->recv_cq)
		ibv_destroy_cq(s->recv_cq);
	s->qp = NULL;
	s->send_cq = s->recv_cq = NULL;
}

static void side_close(struct side *s)
{
	qp_free(s);
	if (s->mr)
		ibv_dereg_mr(s->mr);
	if (s->pd)
		ibv_dealloc_pd(s->pd);
	if (s->ctx)
		ibv_close_device(s->ctx);
	free(s->buf);
	memset(s, 0, sizeof(*s));
}

/* RESET -> INIT -> RTR (-> RTS) towards remote_qpn at gid; 0 or the errno value. */
static int qp_connect(struct ibv_qp *qp, uint32_t remote_qpn, const union ibv_gid *gid,
		      uint32_t sq_psn, uint32_t rq_psn, const struct knobs *k)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
	};
	int ret;

	ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			    IBV_QP_ACCESS_FLAGS);
	if (ret)
		return ret;
	attr = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024, .dest_qp_num = remote_qpn,
		.rq_psn = rq_psn, .max_dest_rd_atomic = 1, .min_rnr_timer = k->min_rnr_timer,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = *gid, .sgid_index = 0, .hop_limit = 64 } },
	};
	ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	if (ret || k->stop_at_rtr)
		return ret;
	attr = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTS, .timeout = k->timeout, .retry_cnt = k->retry_cnt,
		.rnr_retry = k->rnr_retry, .sq_psn = sq_psn, .max_rd_atomic = 1,
	};
	return ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

static int to_rts(struct ibv_qp *qp, uint32_t sq_psn)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 7,
				    .rnr_retry = 7, .sq_psn = sq_psn, .max_rd_atomic = 1 };

	return ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* Fresh QPs on a and b, a (knobs ka) connected to b (knobs kb). */
static bool pair_new(struct side *a, struct side *b, int a_send_cqe, const struct knobs *ka,
		     const struct knobs *kb)
{
	int ret;

	if (!qp_new(a, a_send_cqe) || !qp_new(b, DEPTH))
		return false;
	ret = qp_connect(a->qp, b->qp->qp_num, &b->gid, PSN_A, PSN_B, ka);
	if (!ret)
		ret = qp_connect(b->qp, a->qp->qp_num, &a->gid, PSN_B, PSN_A, kb);
	if (ret)
		check(false, "connect: %s", strerror(ret));
	return !ret;
}

static bool post_recv_len(struct side *s, uint64_t wr_id, uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)s->buf, .length = len, .lkey = s->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(s->qp, &wr, &bad) == 0;
}

static bool post_recv(struct side *s, uint64_t wr_id)
{
	return post_recv_len(s, wr_id, BUF_SIZE);
}

static int post_op(struct side *s, enum ibv_wr_opcode op, uint64_t wr_id, uint32_t rkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)s->buf, .length = 64, .lkey = s->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	wr.wr.rdma.remote_addr = (uintptr_t)s->buf;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(s->qp, &wr, &bad);
}

static bool post_send(struct side *s, uint64_t wr_id)
{
	int ret = post_op(s, IBV_WR_SEND, wr_id, 0);

	if (ret)
		check(false, "post_send %" PRIu64 ": %s", wr_id, strerror(ret));
	return ret == 0;
}

/* One completion of cq within ms; false when none came. */
static bool poll_one(struct ibv_cq *cq, struct ibv_wc *wc, unsigned int ms)
{
	uint64_t end = now_ms() + ms;

	do {
		int n = ibv_poll_cq(cq, 1, wc);

		if (n == 1)
			return true;
		if (n < 0)
			return false;
		sleep_ms(1);
	} while (now_ms() < end);
	return false;
}

static void expect_wc(struct ibv_cq *cq, uint64_t wr_id, enum ibv_wc_status status,
		      const char *what)
{
	struct ibv_wc wc;

	if (!poll_one(cq, &wc, WAIT_MS)) {
		check(false, "%s: no completion", what);
		return;
	}
	check(wc.wr_id == wr_id && wc.status == status, "%s: wr_id %" PRIu64 " %s", what,
	      wc.wr_id, ibv_wc_status_str(wc.status));
}

/* The async event type on element (NULL: any) within ms; other events are listed and skipped. */
static bool wait_event(struct ibv_context *ctx, enum ibv_event_type type, const void *element,
		       unsigned int ms)
{
	uint64_t end = now_ms() + ms;
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };

	for (;;) {
		struct ibv_async_event ev;
		uint64_t now = now_ms();
		const void *got;

		if (now >= end || poll(&pfd, 1, (int)(end - now)) <= 0)
			return false;
		if (ibv_get_async_event(ctx, &ev))
			return false;
		got = ev.event_type == IBV_EVENT_CQ_ERR ? (const void *)ev.element.cq :
		      (const void *)ev.element.qp;
		ibv_ack_async_event(&ev);
		if (ev.event_type == type && (!element || got == element))
			return true;
		printf("note: event %s skipped\n", ibv_event_type_str(ev.event_type));
	}
}

static enum ibv_qp_state qp_state(struct ibv_qp *qp, int *draining)
{
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;

	if (ibv_query_qp(qp, &attr, IBV_QP_STATE, &init))
		return (enum ibv_qp_state)-1;
	if (draining)
		*draining = attr.sq_draining;
	return attr.qp_state;
}

/* ---- checks between two devices of one daemon ---- */

static void check_rnr_exceeded(struct side *a, struct side *b)
{
	struct knobs ka = default_knobs;

	ka.rnr_retry = 1;
	if (!pair_new(a, b, DEPTH, &ka, &default_knobs))
		return;
	/* b posts no receive: every try gets an RNR NAK. */
	if (post_send(a, 1)) {
		expect_wc(a->send_cq, 1, IBV_WC_RNR_RETRY_EXC_ERR, "RNR exceeded");
		check(qp_state(a->qp, NULL) == IBV_QPS_ERR, "RNR exceeded: requester QP in ERR");
		check(wait_event(a->ctx, IBV_EVENT_QP_FATAL, a->qp, WAIT_MS),
		      "RNR exceeded: QP_FATAL on the requester QP");
	}
	qp_free(a);
	qp_free(b);
}

static void check_rnr_recovered(struct side *a, struct side *b)
{
	struct ibv_wc wc;

	if (!pair_new(a, b, DEPTH, &default_knobs, &default_knobs))
		return;
	/* rnr_retry 7 retries for ever: the SEND waits for the receive, however late. */
	if (post_send(a, 2)) {
		check(!poll_one(a->send_cq, &wc, QUIET_MS), "RNR: no completion without a receive");
		check(post_recv(b, 20), "RNR: receive posted late");
		expect_wc(a->send_cq, 2, IBV_WC_SUCCESS, "RNR recovered: SEND");
		expect_wc(b->recv_cq, 20, IBV_WC_SUCCESS, "RNR recovered: receive");
		check(qp_state(a->qp, NULL) == IBV_QPS_RTS, "RNR recovered: requester still RTS");
	}
	qp_free(a);
	qp_free(b);
}

static void check_comm_est(struct side *a, struct side *b)
{
	struct knobs kb = default_knobs;

	kb.stop_at_rtr = true;
	if (!pair_new(a, b, DEPTH, &default_knobs, &kb))
		return;
	if (post_recv(b, 30) && post_send(a, 3)) {
		check(wait_event(b->ctx, IBV_EVENT_COMM_EST, b->qp, WAIT_MS),
		      "COMM_EST on the responder QP in RTR");
		expect_wc(b->recv_cq, 30, IBV_WC_SUCCESS, "COMM_EST: receive in RTR");
		expect_wc(a->send_cq, 3, IBV_WC_SUCCESS, "COMM_EST: SEND");
		check(to_rts(b->qp, PSN_B) == 0, "COMM_EST: responder to RTS");
	}
	qp_free(a);
	qp_free(b);
}

static void check_sqd(struct side *a, struct side *b)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_SQD, .en_sqd_async_notify = 1 };
	struct ibv_wc wc;
	int n = 8, i, good = 0, draining = -1;
	enum ibv_qp_state state;

	if (!pair_new(a, b, DEPTH, &default_knobs, &default_knobs))
		return;
	for (i = 0; i < n + 1; i++)
		post_recv(b, 100 + i);
	for (i = 0; i < n; i++)
		if (!post_send(a, 40 + i))
			goto out;
	check(ibv_modify_qp(a->qp, &attr, IBV_QP_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY) == 0,
	      "SQD: RTS -> SQD with en_sqd_async_notify");
	check(wait_event(a->ctx, IBV_EVENT_SQ_DRAINED, a->qp, WAIT_MS), "SQD: SQ_DRAINED");
	/* Drained: every WQE posted before the transition has its CQE already. */
	for (i = 0; i < n && ibv_poll_cq(a->send_cq, 1, &wc) == 1; i++)
		good += wc.status == IBV_WC_SUCCESS && wc.wr_id == (uint64_t)(40 + i);
	check(good == n, "SQD: %d of %d WQEs completed before SQ_DRAINED", good, n);
	state = qp_state(a->qp, &draining);
	check(state == IBV_QPS_SQD && draining == 0, "SQD: state %d (SQD %d), sq_draining %d",
	      state, IBV_QPS_SQD, draining);
	/* A WQE posted in SQD waits for RTS. */
	if (post_send(a, 60)) {
		check(!poll_one(a->send_cq, &wc, QUIET_MS), "SQD: a new WQE does not start");
		attr.qp_state = IBV_QPS_RTS;
		check(ibv_modify_qp(a->qp, &attr, IBV_QP_STATE) == 0, "SQD -> RTS");
		expect_wc(a->send_cq, 60, IBV_WC_SUCCESS, "SQD -> RTS: the new WQE completes");
	}
out:
	qp_free(a);
	qp_free(b);
}

static void check_cq_overrun(struct side *a, struct side *b)
{
	int i;

	/* A CQ of 2 entries (4 slots on mlx5) and 8 signaled SENDs nobody polls. */
	if (!pair_new(a, b, 2, &default_knobs, &default_knobs))
		return;
	for (i = 0; i < 8; i++)
		if (!post_recv(b, 200 + i) || !post_send(a, 70 + i))
			goto out;
	check(wait_event(a->ctx, IBV_EVENT_CQ_ERR, a->send_cq, WAIT_MS),
	      "CQ overrun: CQ_ERR on the send CQ");
out:
	qp_free(a);
	qp_free(b);
}

static void check_access_err(struct side *a, struct side *b)
{
	int ret;

	if (!pair_new(a, b, DEPTH, &default_knobs, &default_knobs))
		return;
	ret = post_op(a, IBV_WR_RDMA_WRITE, 80, b->mr->rkey ^ 0x5a00);
	check(ret == 0, "WRITE with a bad rkey posted");
	if (!ret) {
		expect_wc(a->send_cq, 80, IBV_WC_REM_ACCESS_ERR, "bad rkey: requester");
		check(wait_event(b->ctx, IBV_EVENT_QP_ACCESS_ERR, b->qp, WAIT_MS),
		      "bad rkey: QP_ACCESS_ERR on the responder QP");
		check(qp_state(b->qp, NULL) == IBV_QPS_ERR, "bad rkey: responder QP in ERR");
	}
	qp_free(a);
	qp_free(b);
}

static void check_req_err(struct side *a, struct side *b)
{
	if (!pair_new(a, b, DEPTH, &default_knobs, &default_knobs))
		return;
	/* 64 bytes into a 16-byte receive: the responder finds an invalid request. */
	if (post_recv_len(b, 90, 16) && post_send(a, 9)) {
		expect_wc(a->send_cq, 9, IBV_WC_REM_INV_REQ_ERR, "too long: requester");
		expect_wc(b->recv_cq, 90, IBV_WC_LOC_LEN_ERR, "too long: receive");
		check(wait_event(b->ctx, IBV_EVENT_QP_REQ_ERR, b->qp, WAIT_MS),
		      "too long: QP_REQ_ERR on the responder QP");
	}
	qp_free(a);
	qp_free(b);
}

static int run_local(const char *dev_a, const char *dev_b)
{
	struct side a, b;

	if (side_open(&a, dev_a) && side_open(&b, dev_b)) {
		check_comm_est(&a, &b);
		check_rnr_exceeded(&a, &b);
		check_rnr_recovered(&a, &b);
		check_sqd(&a, &b);
		check_cq_overrun(&a, &b);
		check_access_err(&a, &b);
		check_req_err(&a, &b);
	}
	side_close(&a);
	side_close(&b);
	return finish();
}

/* ---- retry exceeded: the peer lives in another daemon, which dies ---- */

/* pid is gone or a zombie (not our child: its parent reaps it) within ms. */
static bool process_dead(pid_t pid, unsigned int ms)
{
	uint64_t end = now_ms() + ms;
	char path[64], stat[256];

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	do {
		FILE *f = fopen(path, "r");
		char *close_paren;

		if (!f)
			return true;
		close_paren = fgets(stat, sizeof(stat), f) ? strrchr(stat, ')') : NULL;
		fclose(f);
		if (!close_paren || close_paren[1] == '\0' || close_paren[2] == 'Z' ||
		    close_paren[2] == 'X')
			return true;
		sleep_ms(1);
	} while (now_ms() < end);
	return false;
}

struct endpoint {
	uint32_t qpn;
	union ibv_gid gid;
};

/* The peer process: its QP in the other daemon, connected to ours, then wait to be killed. */
static void peer_main(const char *dev, const char *dir, int to_parent, int from_parent)
{
	struct endpoint mine, theirs;
	struct side s;
	char ok = 1;

	setenv("ROCEMU_RUNTIME_DIR", dir, 1);
	if (!side_open(&s, dev) || !qp_new(&s, DEPTH))
		_exit(1);
	mine = (struct endpoint){ .qpn = s.qp->qp_num, .gid = s.gid };
	if (write(to_parent, &mine, sizeof(mine)) != sizeof(mine) ||
	    read(from_parent, &theirs, sizeof(theirs)) != sizeof(theirs) ||
	    qp_connect(s.qp, theirs.qpn, &theirs.gid, PSN_B, PSN_A, &default_knobs) ||
	    !post_recv(&s, 1) || write(to_parent, &ok, 1) != 1)
		_exit(1);
	/* Until the parent is done (EOF) or kills us. */
	while (read(from_parent, &ok, 1) > 0)
		;
	_exit(0);
}

static int run_retry(const char *dev_a, const char *dev_b, const char *dir_b, pid_t daemon_b)
{
	struct knobs ka = default_knobs;
	int up[2], down[2], status;
	struct endpoint mine, theirs;
	struct side a;
	pid_t peer;
	char ok;

	if (pipe(up) || pipe(down))
		return 1;
	peer = fork();	/* before any verb: the child talks to the other daemon */
	if (peer < 0)
		return 1;
	if (peer == 0) {
		close(up[0]);
		close(down[1]);
		peer_main(dev_b, dir_b, up[1], down[0]);
	}
	close(up[1]);
	close(down[0]);
	ka.timeout = 10;	/* 4.096 us * 2^10: about 4 ms */
	ka.retry_cnt = 2;
	if (!side_open(&a, dev_a) || !qp_new(&a, DEPTH))
		goto out;
	mine = (struct endpoint){ .qpn = a.qp->qp_num, .gid = a.gid };
	if (read(up[0], &theirs, sizeof(theirs)) != sizeof(theirs) ||
	    write(down[1], &mine, sizeof(mine)) != sizeof(mine) ||
	    qp_connect(a.qp, theirs.qpn, &theirs.gid, PSN_A, PSN_B, &ka) ||
	    read(up[0], &ok, 1) != 1) {
		check(false, "connect to the peer in the other daemon");
		goto out;
	}
	/* Both daemons alive: the path works. */
	if (post_send(&a, 1))
		expect_wc(a.send_cq, 1, IBV_WC_SUCCESS, "SEND to the other daemon");
	check(kill(daemon_b, SIGKILL) == 0 && process_dead(daemon_b, WAIT_MS),
	      "peer daemon killed");
	if (post_send(&a, 2) && post_send(&a, 3)) {
		expect_wc(a.send_cq, 2, IBV_WC_RETRY_EXC_ERR, "peer gone: retry exceeded");
		expect_wc(a.send_cq, 3, IBV_WC_WR_FLUSH_ERR, "peer gone: next WR flushed");
		check(qp_state(a.qp, NULL) == IBV_QPS_ERR, "peer gone: QP in ERR");
		check(wait_event(a.ctx, IBV_EVENT_QP_FATAL, a.qp, WAIT_MS),
		      "peer gone: QP_FATAL");
		if (post_send(&a, 4))
			expect_wc(a.send_cq, 4, IBV_WC_WR_FLUSH_ERR, "in ERR: a later WR flushed");
	}
out:
	side_close(&a);
	close(down[1]);
	kill(peer, SIGKILL);
	waitpid(peer, &status, 0);
	close(up[0]);
	return finish();
}

/* ---- the daemon dies while we wait in ibv_get_async_event ---- */

static void *killer(void *arg)
{
	sleep_ms(50);	/* most likely after the main thread blocks; either order is right */
	kill(*(pid_t *)arg, SIGKILL);
	return NULL;
}

static int run_fatal(const char *dev, pid_t daemon)
{
	struct ibv_comp_channel *ch;
	struct ibv_async_event ev;
	struct ibv_cq *cq, *ev_cq;
	void *cq_ctx;
	pthread_t t;
	struct side s;
	int ret;

	if (!side_open(&s, dev))
		return finish();
	ch = ibv_create_comp_channel(s.ctx);
	cq = ch ? ibv_create_cq(s.ctx, 4, NULL, ch, 0) : NULL;
	check(cq && ibv_req_notify_cq(cq, 0) == 0, "channel and armed CQ");
	if (!cq)
		return finish();
	pthread_create(&t, NULL, killer, &daemon);
	ret = ibv_get_async_event(s.ctx, &ev);
	pthread_join(t, NULL);
	check(ret == 0 && ev.event_type == IBV_EVENT_DEVICE_FATAL, "DEVICE_FATAL when the daemon dies");
	if (!ret)
		ibv_ack_async_event(&ev);
	check(ibv_get_async_event(s.ctx, &ev) == -1, "DEVICE_FATAL only once, then an error");
	check(ibv_get_cq_event(ch, &ev_cq, &cq_ctx) == -1, "ibv_get_cq_event returns -1");
	errno = 0;
	check(ibv_alloc_pd(s.ctx) == NULL && errno == EIO, "ibv_alloc_pd fails with EIO (%s)",
	      strerror(errno));
	ret = ibv_destroy_cq(cq);
	check(ret == EIO, "ibv_destroy_cq fails with EIO (%s)", strerror(ret));
	return finish();	/* the context cannot be closed cleanly: the daemon is gone */
}

/* ---- port down/up ---- */

static bool port_state_cmd(const char *rocemu, const char *cmd, const char *dev)
{
	char line[1024];

	snprintf(line, sizeof(line), "env -u LD_PRELOAD '%s' %s %s >/dev/null", rocemu, cmd, dev);
	return system(line) == 0;
}

static bool port_is(struct ibv_context *ctx, enum ibv_port_state want)
{
	struct ibv_port_attr attr;

	return ibv_query_port(ctx, 1, &attr) == 0 && attr.state == want;
}

static int run_port(const char *dev, const char *rocemu)
{
	struct side s;

	if (side_open(&s, dev)) {
		check(port_state_cmd(rocemu, "down", dev), "rocemu down %s", dev);
		check(wait_event(s.ctx, IBV_EVENT_PORT_ERR, NULL, WAIT_MS), "PORT_ERR");
		check(port_is(s.ctx, IBV_PORT_DOWN), "port DOWN");
		check(port_state_cmd(rocemu, "up", dev), "rocemu up %s", dev);
		check(wait_event(s.ctx, IBV_EVENT_PORT_ACTIVE, NULL, WAIT_MS), "PORT_ACTIVE");
		check(port_is(s.ctx, IBV_PORT_ACTIVE), "port ACTIVE");
	}
	side_close(&s);
	return finish();
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && !strcmp(argv[1], "local"))
		return run_local(argv[2], argv[3]);
	if (argc == 6 && !strcmp(argv[1], "retry"))
		return run_retry(argv[2], argv[3], argv[4], (pid_t)atoi(argv[5]));
	if (argc == 4 && !strcmp(argv[1], "fatal"))
		return run_fatal(argv[2], (pid_t)atoi(argv[3]));
	if (argc == 4 && !strcmp(argv[1], "port"))
		return run_port(argv[2], argv[3]);
	fprintf(stderr, "usage: %s local DEV_A DEV_B | retry DEV_A DEV_B DIR_B PID_B | "
		"fatal DEV PID | port DEV ROCEMU\n", argv[0]);
	return 2;
}
