/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * A signal without SA_RESTART ends a blocking wait for an event with
 * EINTR, as on the kernel's files: ibv_get_cq_event, ibv_get_async_event
 * and rdma_get_cm_event, each waiting for an event that never comes.
 * qperf ends its event-driven test loops this way (its interval timer's
 * SIGALRM); a wait that swallowed the signal hung it for good.
 *
 * A helper thread signals the waiting thread every 50 ms until the wait
 * returns; after 20 s without a return it reports the hang and exits.
 *
 * usage: wait_eintr DEVICE
 * Prints "ok: ..." per check and "N failed" last; exits 0 when none failed.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "tests/e2e/harness/check_line.h"

#define HANG_MS 20000
#define RESIGNAL_MS 50

static pthread_t waiter;
static volatile int wait_over;
static volatile sig_atomic_t signals;

static void on_signal(int sig)
{
	(void)sig;
	signals++;
}

static void *interrupter(void *arg)
{
	const char *what = arg;
	struct timespec step = { 0, RESIGNAL_MS * 1000000L };
	int waited = 0;

	while (!__atomic_load_n(&wait_over, __ATOMIC_ACQUIRE)) {
		if (waited >= HANG_MS) {
			printf("FAIL: %s: still waiting %d ms after the first signal\n", what, HANG_MS);
			_exit(1);
		}
		pthread_kill(waiter, SIGUSR1);
		nanosleep(&step, NULL);
		waited += RESIGNAL_MS;
	}
	return NULL;
}

/* Run wait (returning 0 or -1 with errno) under the interrupter: it must fail with EINTR. */
#define EXPECT_EINTR(call, what)						\
	do {									\
		pthread_t t;							\
		int ret, err;							\
									\
		wait_over = 0;							\
		signals = 0;							\
		pthread_create(&t, NULL, interrupter, (void *)(what));		\
		ret = (call);							\
		err = errno;							\
		__atomic_store_n(&wait_over, 1, __ATOMIC_RELEASE);		\
		pthread_join(t, NULL);						\
		CHECK(ret == -1 && err == EINTR, "%s: -1 with EINTR after %d signals (ret %d, %s)", \
		      what, (int)signals, ret, strerror(err));		\
	} while (0)

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };	/* no SA_RESTART */
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	struct ibv_comp_channel *cc;
	struct ibv_async_event async;
	struct rdma_event_channel *ch;
	struct rdma_cm_event *ev;
	struct ibv_cq *cq;
	void *cq_ctx;
	int i;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DEVICE\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	sigaction(SIGUSR1, &sa, NULL);
	waiter = pthread_self();
	list = ibv_get_device_list(NULL);
	for (i = 0; list && list[i] && !ctx; i++)
		if (!strcmp(ibv_get_device_name(list[i]), argv[1]))
			ctx = ibv_open_device(list[i]);
	if (!ctx || !(cc = ibv_create_comp_channel(ctx)) ||
	    !(cq = ibv_create_cq(ctx, 4, NULL, cc, 0)) || ibv_req_notify_cq(cq, 0) ||
	    !(ch = rdma_create_event_channel())) {
		perror(argv[1]);
		return 1;
	}
	EXPECT_EINTR(ibv_get_cq_event(cc, &cq, &cq_ctx), "ibv_get_cq_event");
	EXPECT_EINTR(ibv_get_async_event(ctx, &async), "ibv_get_async_event");
	EXPECT_EINTR(rdma_get_cm_event(ch, &ev), "rdma_get_cm_event");
	rdma_destroy_event_channel(ch);
	ibv_destroy_cq(cq);
	ibv_destroy_comp_channel(cc);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	printf("%d failed\n", failed);
	return failed ? 1 : 0;
}
