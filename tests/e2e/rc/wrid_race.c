/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * One thread posts signaled WRITEs on a QP while another polls its send
 * CQ: every completion must carry the wr_id of its own WR, in order, even
 * when the poster refills a slot the moment the poller frees it (a small
 * send queue keeps it full).
 *
 *   wrid_race DEV_A DEV_B COUNT
 *
 * One line per check, then "N passed" and "N failed"; exit 0 when none failed.
 */
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>
#include "tests/e2e/harness/verbs_pair.h"

#define SQ_DEPTH 64
#define POLL_BATCH 16
#define STALL_MS 10000		/* no completion for this long: the data path is stuck */

static const struct side_spec race_side = {
	.cap = { .max_send_wr = SQ_DEPTH, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
	.send_cqe = 4 * SQ_DEPTH, .recv_cqe = 4,
	.knobs = QP_KNOBS_DEFAULT,
};

static struct pair p;
static struct buf *target;
static uint64_t count;
static int post_error;
static bool stop;

/* Zero-byte WRITEs, wr_id 0, 1, 2...: whenever the queue has room. */
static void *poster(void *arg)
{
	struct ibv_send_wr wr = {
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr_of(target, 0), .rkey = target->mr->rkey },
	};
	struct ibv_send_wr *bad;
	uint64_t n = 0;
	int ret;

	(void)arg;
	while (n < count && !__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		wr.wr_id = n;
		ret = ibv_post_send(p.a.qp, &wr, &bad);
		if (ret == ENOMEM) {
			sched_yield();	/* full: leave the CPU to the daemon and the poller */
			continue;
		}
		if (ret) {
			post_error = ret;
			break;
		}
		n++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct ibv_wc wc[POLL_BATCH];
	struct timespec start, last;
	uint64_t next = 0, wrong = 0, failed = 0;
	pthread_t t;
	int i, n;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 4) {
		fprintf(stderr, "usage: wrid_race DEV_A DEV_B COUNT\n");
		return 2;
	}
	count = strtoull(argv[3], NULL, 0);
	if (!dev_open(&dev_a, argv[1]) || !dev_open(&dev_b, argv[2]) ||
	    !pair_open(&p, &race_side, &race_side))
		goto out;
	target = buf_new(&dev_b, 64, 64, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, 0);
	if (!target || pthread_create(&t, NULL, poster, NULL)) {
		check(false, "target buffer and poster thread");
		goto out;
	}
	clock_gettime(CLOCK_MONOTONIC, &start);
	last = start;
	while (next < count && elapsed_ms(&last) < STALL_MS && !post_error) {
		n = ibv_poll_cq(p.a.send_cq, POLL_BATCH, wc);
		if (n < 0)
			break;
		if (n > 0)
			clock_gettime(CLOCK_MONOTONIC, &last);
		for (i = 0; i < n; i++, next++) {
			if (wc[i].status != IBV_WC_SUCCESS && failed++ < 5)
				printf("note: completion %" PRIu64 ": %s\n", next,
				       ibv_wc_status_str(wc[i].status));
			if (wc[i].wr_id != next && wrong++ < 5)
				printf("note: completion %" PRIu64 " carries wr_id %" PRIu64 "\n",
				       next, wc[i].wr_id);
		}
	}
	__atomic_store_n(&stop, true, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	printf("%" PRIu64 " completions in %.2f s\n", next, elapsed_ms(&start) / 1000.0);
	check(!post_error, "every post accepted (%s)", strerror(post_error));
	check(next == count, "%" PRIu64 " completions of %" PRIu64, next, count);
	check(failed == 0, "%" PRIu64 " completions with an error", failed);
	check(wrong == 0, "%" PRIu64 " completions with a wrong wr_id", wrong);
out:
	pair_close(&p);
	bufs_free();
	dev_close(&dev_b);
	dev_close(&dev_a);
	return checks_finish();
}
