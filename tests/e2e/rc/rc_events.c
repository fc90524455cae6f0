/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * QP states and async events through the public verbs API: RNR retry
 * exhausted and recovered, COMM_EST, the SQD drain with SQ_DRAINED, CQ
 * overrun (CQ_ERR, then QP_FATAL for the QP reporting to it), a
 * responder's access error and invalid request (QP_ACCESS_ERR,
 * QP_REQ_ERR), the local ACK timeout when the peer's daemon is gone
 * (RETRY_EXC_ERR, QP_FATAL, flush), DEVICE_FATAL when our own daemon dies,
 * PORT_ERR/PORT_ACTIVE and a SEND that waits out a port without link.
 * Every wait is a bounded poll; nothing depends on how long anything takes.
 * Devices, QP pairs and checks are those of verbs_pair.c.
 *
 *   rc_events local DEV_A DEV_B          checks between two devices of one daemon
 *   rc_events retry DEV_A DEV_B DIR_B PID_B
 *                                        DEV_B lives in the daemon PID_B of runtime
 *                                        dir DIR_B; it is killed mid-test
 *   rc_events fatal DEV PID              the daemon PID of DEV is killed
 *   rc_events port DEV_A DEV_B ROCEMU    `ROCEMU down/up DEV_B` under a SEND from A
 *
 * One line per check, then "N passed" and "N failed"; exit 0 when none failed.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include "tests/e2e/harness/verbs_pair.h"

#define WAIT_MS 10000		/* an event or completion later than this counts as missing */
#define QUIET_MS 100		/* how long nothing must happen where nothing may */
#define BUF_SIZE 4096
#define DEPTH 16

/* Small queues and the shortest RNR timer; the checks turn the knobs from here. */
static const struct side_spec events_side = {
	.cap = { .max_send_wr = DEPTH, .max_recv_wr = DEPTH, .max_send_sge = 1, .max_recv_sge = 1 },
	.send_cqe = DEPTH, .recv_cqe = 4 * DEPTH,
	.knobs = { .max_rd_atomic = 1, .max_dest_rd_atomic = 1, .min_rnr_timer = 1,
		   .timeout = 14, .retry_cnt = 7, .rnr_retry = 7 },
};

static struct buf *mem_a, *mem_b;	/* what every WR on dev_a, on dev_b sends from or into */

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* ---- devices, work requests, events ---- */

/* d opened by name, and its one buffer for every WR; NULL after a FAIL line. */
static struct buf *dev_open_with_mem(struct dev *d, const char *name)
{
	if (!dev_open(d, name))
		return NULL;
	return buf_new(d, BUF_SIZE, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		       IBV_ACCESS_REMOTE_READ, 0);
}

static bool recv_into(struct ibv_qp *qp, struct buf *mem, uint64_t wr_id, uint32_t len)
{
	struct ibv_sge sge = sge_of(mem, 0, len);
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 };

	return post_recv(qp, &wr, "receive");
}

/* A signaled op of 64 bytes of mem; an RDMA op aims at mem's own address under rkey. */
static bool post_op(struct ibv_qp *qp, struct buf *mem, enum ibv_wr_opcode op, uint64_t wr_id,
		    uint32_t rkey)
{
	struct ibv_sge sge = sge_of(mem, 0, 64);
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr_of(mem, 0), .rkey = rkey },
	};
	char what[32];

	snprintf(what, sizeof(what), "WR %" PRIu64, wr_id);
	return post_send(qp, &wr, what);
}

static bool send_64(struct ibv_qp *qp, struct buf *mem, uint64_t wr_id)
{
	return post_op(qp, mem, IBV_WR_SEND, wr_id, 0);
}

/* ---- checks between two devices of one daemon ---- */

static void check_rnr_exceeded(void)
{
	struct side_spec requester = events_side;
	struct pair p;

	requester.knobs.rnr_retry = 1;
	/* b posts no receive: every try gets an RNR NAK. */
	if (pair_open(&p, &requester, &events_side) && send_64(p.a.qp, mem_a, 1)) {
		expect_wc(p.a.send_cq, "RNR exceeded", (struct want){ 1, IBV_WC_RNR_RETRY_EXC_ERR, -1, -1 },
			  NULL);
		expect_state(p.a.qp, IBV_QPS_ERR, "RNR exceeded: requester");
		check(wait_event(dev_a.ctx, IBV_EVENT_QP_FATAL, p.a.qp, WAIT_MS),
		      "RNR exceeded: QP_FATAL on the requester QP");
	}
	pair_close(&p);
}

static void check_rnr_recovered(void)
{
	struct ibv_wc wc;
	struct pair p;

	/* rnr_retry 7 retries for ever: the SEND waits for the receive, however late. */
	if (pair_open(&p, &events_side, &events_side) && send_64(p.a.qp, mem_a, 2)) {
		check(poll_wc(p.a.send_cq, &wc, QUIET_MS) <= 0, "RNR: no completion without a receive");
		check(recv_into(p.b.qp, mem_b, 20, BUF_SIZE), "RNR: receive posted late");
		expect_wc(p.a.send_cq, "RNR recovered: SEND", (struct want){ 2, IBV_WC_SUCCESS, -1, -1 }, NULL);
		expect_wc(p.b.recv_cq, "RNR recovered: receive", (struct want){ 20, IBV_WC_SUCCESS, -1, -1 },
			  NULL);
		expect_state(p.a.qp, IBV_QPS_RTS, "RNR recovered: requester");
	}
	pair_close(&p);
}

static void check_comm_est(void)
{
	struct side_spec responder = events_side;
	struct pair p;

	responder.knobs.stop_at_rtr = true;
	if (pair_open(&p, &events_side, &responder) && recv_into(p.b.qp, mem_b, 30, BUF_SIZE) &&
	    send_64(p.a.qp, mem_a, 3)) {
		check(wait_event(dev_b.ctx, IBV_EVENT_COMM_EST, p.b.qp, WAIT_MS),
		      "COMM_EST on the responder QP in RTR");
		expect_wc(p.b.recv_cq, "COMM_EST: receive in RTR", (struct want){ 30, IBV_WC_SUCCESS, -1, -1 },
			  NULL);
		expect_wc(p.a.send_cq, "COMM_EST: SEND", (struct want){ 3, IBV_WC_SUCCESS, -1, -1 }, NULL);
		check(qp_to_rts(p.b.qp, PSN_B, &events_side.knobs) == 0, "COMM_EST: responder to RTS");
	}
	pair_close(&p);
}

static void check_sqd(void)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_SQD, .en_sqd_async_notify = 1 };
	enum ibv_qp_state state = (enum ibv_qp_state)-1;
	int n = 8, i, good = 0, draining = -1;
	struct ibv_wc wc;
	struct pair p;

	if (!pair_open(&p, &events_side, &events_side))
		goto out;
	for (i = 0; i < n + 1; i++)
		recv_into(p.b.qp, mem_b, 100 + i, BUF_SIZE);
	for (i = 0; i < n; i++)
		if (!send_64(p.a.qp, mem_a, 40 + i))
			goto out;
	check(ibv_modify_qp(p.a.qp, &attr, IBV_QP_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY) == 0,
	      "SQD: RTS -> SQD with en_sqd_async_notify");
	check(wait_event(dev_a.ctx, IBV_EVENT_SQ_DRAINED, p.a.qp, WAIT_MS), "SQD: SQ_DRAINED");
	/* Drained: every WQE posted before the transition has its CQE already. */
	for (i = 0; i < n && ibv_poll_cq(p.a.send_cq, 1, &wc) == 1; i++)
		good += wc.status == IBV_WC_SUCCESS && wc.wr_id == (uint64_t)(40 + i);
	check(good == n, "SQD: %d of %d WQEs completed before SQ_DRAINED", good, n);
	qp_state(p.a.qp, &state, &draining);
	check(state == IBV_QPS_SQD && draining == 0, "SQD: state %d (SQD %d), sq_draining %d",
	      state, IBV_QPS_SQD, draining);
	/* A WQE posted in SQD waits for RTS. */
	if (send_64(p.a.qp, mem_a, 60)) {
		check(poll_wc(p.a.send_cq, &wc, QUIET_MS) <= 0, "SQD: a new WQE does not start");
		attr.qp_state = IBV_QPS_RTS;
		check(ibv_modify_qp(p.a.qp, &attr, IBV_QP_STATE) == 0, "SQD -> RTS");
		expect_wc(p.a.send_cq, "SQD -> RTS: the new WQE completes",
			  (struct want){ 60, IBV_WC_SUCCESS, -1, -1 }, NULL);
	}
out:
	pair_close(&p);
}

static void check_cq_overrun(void)
{
	struct side_spec requester = events_side;
	struct pair p;
	int i;

	/* A CQ of 2 entries (4 slots on mlx5) and 8 signaled SENDs nobody polls. */
	requester.send_cqe = 2;
	if (!pair_open(&p, &requester, &events_side))
		goto out;
	for (i = 0; i < 8; i++)
		if (!recv_into(p.b.qp, mem_b, 200 + i, BUF_SIZE) || !send_64(p.a.qp, mem_a, 70 + i))
			goto out;
	check(wait_event(dev_a.ctx, IBV_EVENT_CQ_ERR, p.a.send_cq, WAIT_MS),
	      "CQ overrun: CQ_ERR on the send CQ");
	/* The next CQE the QP cannot report fails it (local work queue catastrophic error). */
	check(wait_event(dev_a.ctx, IBV_EVENT_QP_FATAL, p.a.qp, WAIT_MS),
	      "CQ overrun: QP_FATAL on the QP reporting to it");
	expect_state(p.a.qp, IBV_QPS_ERR, "CQ overrun: requester");
out:
	pair_close(&p);
}

static void check_access_err(void)
{
	struct pair p;
	bool posted;

	if (!pair_open(&p, &events_side, &events_side))
		goto out;
	posted = post_op(p.a.qp, mem_a, IBV_WR_RDMA_WRITE, 80, mem_b->mr->rkey ^ 0x5a00);
	check(posted, "WRITE with a bad rkey posted");
	if (posted) {
		expect_wc(p.a.send_cq, "bad rkey: requester",
			  (struct want){ 80, IBV_WC_REM_ACCESS_ERR, -1, -1 }, NULL);
		check(wait_event(dev_b.ctx, IBV_EVENT_QP_ACCESS_ERR, p.b.qp, WAIT_MS),
		      "bad rkey: QP_ACCESS_ERR on the responder QP");
		expect_state(p.b.qp, IBV_QPS_ERR, "bad rkey: responder");
	}
out:
	pair_close(&p);
}

static void check_req_err(void)
{
	struct pair p;

	/* 64 bytes into a 16-byte receive: the responder finds an invalid request. */
	if (pair_open(&p, &events_side, &events_side) && recv_into(p.b.qp, mem_b, 90, 16) &&
	    send_64(p.a.qp, mem_a, 9)) {
		expect_wc(p.a.send_cq, "too long: requester", (struct want){ 9, IBV_WC_REM_INV_REQ_ERR, -1, -1 },
			  NULL);
		expect_wc(p.b.recv_cq, "too long: receive", (struct want){ 90, IBV_WC_LOC_LEN_ERR, -1, -1 },
			  NULL);
		check(wait_event(dev_b.ctx, IBV_EVENT_QP_REQ_ERR, p.b.qp, WAIT_MS),
		      "too long: QP_REQ_ERR on the responder QP");
	}
	pair_close(&p);
}

static int run_local(const char *name_a, const char *name_b)
{
	mem_a = dev_open_with_mem(&dev_a, name_a);
	mem_b = mem_a ? dev_open_with_mem(&dev_b, name_b) : NULL;
	if (mem_b) {
		check_comm_est();
		check_rnr_exceeded();
		check_rnr_recovered();
		check_sqd();
		check_cq_overrun();
		check_access_err();
		check_req_err();
	}
	bufs_free();
	dev_close(&dev_a);
	dev_close(&dev_b);
	return checks_finish();
}

/* ---- retry exceeded: the peer lives in another daemon, which dies ---- */

/* pid is gone or a zombie (not our child: its parent reaps it) within ms. */
static bool process_dead(pid_t pid, unsigned int ms)
{
	char path[64], stat[256];
	struct timespec start;

	clock_gettime(CLOCK_MONOTONIC, &start);
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
	} while (elapsed_ms(&start) < (long)ms);
	return false;
}

struct endpoint {
	uint32_t qpn;
	union ibv_gid gid;
};

/* The peer process: its QP on dev_b in the other daemon, connected to ours, then wait to be killed. */
static void peer_main(const char *name, const char *dir, int to_parent, int from_parent)
{
	struct endpoint mine, theirs;
	struct side s;
	char ok = 1;

	setenv("ROCEMU_RUNTIME_DIR", dir, 1);
	mem_b = dev_open_with_mem(&dev_b, name);
	if (!mem_b || !side_open(&s, &dev_b, &events_side))
		_exit(1);
	mine = (struct endpoint){ .qpn = s.qp->qp_num, .gid = dev_b.gid };
	if (write(to_parent, &mine, sizeof(mine)) != sizeof(mine) ||
	    read(from_parent, &theirs, sizeof(theirs)) != sizeof(theirs) ||
	    qp_connect(s.qp, theirs.qpn, &theirs.gid, PSN_B, PSN_A, &events_side.knobs) ||
	    !recv_into(s.qp, mem_b, 1, BUF_SIZE) || write(to_parent, &ok, 1) != 1)
		_exit(1);
	/* Until the parent is done (EOF) or kills us. */
	while (read(from_parent, &ok, 1) > 0)
		;
	_exit(0);
}

static int run_retry(const char *name_a, const char *name_b, const char *dir_b, pid_t daemon_b)
{
	struct side_spec requester = events_side;
	int up[2], down[2], status;
	struct endpoint mine, theirs;
	struct side a = { 0 };
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
		peer_main(name_b, dir_b, up[1], down[0]);
	}
	close(up[1]);
	close(down[0]);
	requester.knobs.timeout = 10;	/* 4.096 us * 2^10: about 4 ms */
	requester.knobs.retry_cnt = 2;
	mem_a = dev_open_with_mem(&dev_a, name_a);
	if (!mem_a || !side_open(&a, &dev_a, &requester))
		goto out;
	mine = (struct endpoint){ .qpn = a.qp->qp_num, .gid = dev_a.gid };
	if (read(up[0], &theirs, sizeof(theirs)) != sizeof(theirs) ||
	    write(down[1], &mine, sizeof(mine)) != sizeof(mine) ||
	    qp_connect(a.qp, theirs.qpn, &theirs.gid, PSN_A, PSN_B, &requester.knobs) ||
	    read(up[0], &ok, 1) != 1) {
		check(false, "connect to the peer in the other daemon");
		goto out;
	}
	/* Both daemons alive: the path works. */
	if (send_64(a.qp, mem_a, 1))
		expect_wc(a.send_cq, "SEND to the other daemon", (struct want){ 1, IBV_WC_SUCCESS, -1, -1 },
			  NULL);
	check(kill(daemon_b, SIGKILL) == 0 && process_dead(daemon_b, WAIT_MS),
	      "peer daemon killed");
	if (send_64(a.qp, mem_a, 2) && send_64(a.qp, mem_a, 3)) {
		expect_wc(a.send_cq, "peer gone: retry exceeded",
			  (struct want){ 2, IBV_WC_RETRY_EXC_ERR, -1, -1 }, NULL);
		expect_wc(a.send_cq, "peer gone: next WR flushed",
			  (struct want){ 3, IBV_WC_WR_FLUSH_ERR, -1, -1 }, NULL);
		expect_state(a.qp, IBV_QPS_ERR, "peer gone");
		check(wait_event(dev_a.ctx, IBV_EVENT_QP_FATAL, a.qp, WAIT_MS),
		      "peer gone: QP_FATAL");
		if (send_64(a.qp, mem_a, 4))
			expect_wc(a.send_cq, "in ERR: a later WR flushed",
				  (struct want){ 4, IBV_WC_WR_FLUSH_ERR, -1, -1 }, NULL);
	}
out:
	side_close(&a);
	bufs_free();
	dev_close(&dev_a);
	close(down[1]);
	kill(peer, SIGKILL);
	waitpid(peer, &status, 0);
	close(up[0]);
	return checks_finish();
}

/* ---- the daemon dies while we wait in ibv_get_async_event ---- */

static void *killer(void *arg)
{
	sleep_ms(50);	/* most likely after the main thread blocks; either order is right */
	kill(*(pid_t *)arg, SIGKILL);
	return NULL;
}

static int run_fatal(const char *name, pid_t daemon)
{
	struct ibv_comp_channel *ch;
	struct ibv_async_event ev;
	struct ibv_cq *cq, *ev_cq;
	void *cq_ctx;
	pthread_t t;
	int ret;

	if (!dev_open(&dev_a, name))
		return checks_finish();
	ch = ibv_create_comp_channel(dev_a.ctx);
	cq = ch ? ibv_create_cq(dev_a.ctx, 4, NULL, ch, 0) : NULL;
	check(cq && ibv_req_notify_cq(cq, 0) == 0, "channel and armed CQ");
	if (!cq)
		return checks_finish();
	pthread_create(&t, NULL, killer, &daemon);
	ret = ibv_get_async_event(dev_a.ctx, &ev);
	pthread_join(t, NULL);
	check(ret == 0 && ev.event_type == IBV_EVENT_DEVICE_FATAL, "DEVICE_FATAL when the daemon dies");
	if (!ret)
		ibv_ack_async_event(&ev);
	check(ibv_get_async_event(dev_a.ctx, &ev) == -1, "DEVICE_FATAL only once, then an error");
	check(ibv_get_cq_event(ch, &ev_cq, &cq_ctx) == -1, "ibv_get_cq_event returns -1");
	errno = 0;
	check(ibv_alloc_pd(dev_a.ctx) == NULL && errno == EIO, "ibv_alloc_pd fails with EIO (%s)",
	      strerror(errno));
	ret = ibv_destroy_cq(cq);
	check(ret == EIO, "ibv_destroy_cq fails with EIO (%s)", strerror(ret));
	return checks_finish();	/* the context cannot be closed cleanly: the daemon is gone */
}

/* ---- port down/up ---- */

static bool port_state_cmd(const char *rocemu, const char *cmd, const char *name)
{
	char line[1024];

	snprintf(line, sizeof(line), "env -u LD_PRELOAD '%s' %s %s >/dev/null", rocemu, cmd, name);
	return system(line) == 0;
}

static bool port_is(struct ibv_context *ctx, enum ibv_port_state want)
{
	struct ibv_port_attr attr;

	return ibv_query_port(ctx, 1, &attr) == 0 && attr.state == want;
}

/*
 * Port events, and a port without link: while b's port is down a's SEND
 * gets no answer (it is not even received); once the port is up again the
 * resend after the local ACK timeout completes it.
 */
static int run_port(const char *name_a, const char *name_b, const char *rocemu)
{
	struct side_spec patient = events_side;
	struct pair p = { 0 };
	struct ibv_wc wc;

	patient.knobs.timeout = 18;	/* ~1 s a try, 7 retries: far longer than the port is down */
	mem_a = dev_open_with_mem(&dev_a, name_a);
	mem_b = mem_a ? dev_open_with_mem(&dev_b, name_b) : NULL;
	if (!mem_b || !pair_open(&p, &patient, &patient))
		goto out;
	check(port_state_cmd(rocemu, "down", name_b), "rocemu down %s", name_b);
	check(wait_event(dev_b.ctx, IBV_EVENT_PORT_ERR, NULL, WAIT_MS), "PORT_ERR");
	check(port_is(dev_b.ctx, IBV_PORT_DOWN), "port DOWN");
	if (!recv_into(p.b.qp, mem_b, 10, BUF_SIZE) || !send_64(p.a.qp, mem_a, 11))
		goto out;
	check(poll_wc(p.a.send_cq, &wc, QUIET_MS) == 0 && poll_wc(p.b.recv_cq, &wc, 0) == 0,
	      "port down: nothing completes on either side");
	check(port_state_cmd(rocemu, "up", name_b), "rocemu up %s", name_b);
	check(wait_event(dev_b.ctx, IBV_EVENT_PORT_ACTIVE, NULL, WAIT_MS), "PORT_ACTIVE");
	check(port_is(dev_b.ctx, IBV_PORT_ACTIVE), "port ACTIVE");
	expect_wc(p.a.send_cq, "port up again: SEND resent and completed",
		  (struct want){ 11, IBV_WC_SUCCESS, IBV_WC_SEND, -1 }, NULL);
	expect_wc(p.b.recv_cq, "port up again: SEND received",
		  (struct want){ 10, IBV_WC_SUCCESS, IBV_WC_RECV, 64 }, NULL);
out:
	pair_close(&p);
	bufs_free();
	dev_close(&dev_a);
	dev_close(&dev_b);
	return checks_finish();
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	completion_wait_ms = WAIT_MS;
	if (argc == 4 && !strcmp(argv[1], "local"))
		return run_local(argv[2], argv[3]);
	if (argc == 6 && !strcmp(argv[1], "retry"))
		return run_retry(argv[2], argv[3], argv[4], (pid_t)atoi(argv[5]));
	if (argc == 4 && !strcmp(argv[1], "fatal"))
		return run_fatal(argv[2], (pid_t)atoi(argv[3]));
	if (argc == 5 && !strcmp(argv[1], "port"))
		return run_port(argv[2], argv[3], argv[4]);
	fprintf(stderr, "usage: %s local DEV_A DEV_B | retry DEV_A DEV_B DIR_B PID_B | "
		"fatal DEV PID | port DEV_A DEV_B ROCEMU\n", argv[0]);
	return 2;
}
