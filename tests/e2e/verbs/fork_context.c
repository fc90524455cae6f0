/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * fork() with a context open: while a thread of the parent keeps calling
 * verbs on it, the child calls verbs on the context it inherited. As with
 * uverbs, where the child uses its parent's file, every one of the child's
 * calls succeeds (it has a connection of its own, never a reply meant for
 * the parent), and so does every one of the parent's.
 *
 *   fork_context DEV ROUNDS
 *
 * One line per check, then "N passed" and "N failed"; exit 0 when none failed.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include "tests/e2e/harness/verbs_pair.h"

static struct ibv_cq *cq;
static struct ibv_qp *qp;
static unsigned int rounds;
static bool child_done;

/*
 * One round of verbs that each need the daemon (the QP's only in the
 * parent, whose connection made it); the errno value of the first
 * failure, or 0.
 */
static int verbs_round(bool with_qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_port_attr port;
	struct ibv_qp_attr attr;
	struct ibv_pd *pd;
	int ret;

	ret = ibv_query_port(dev_a.ctx, 1, &port);
	if (!ret && with_qp)
		ret = ibv_query_qp(qp, &attr, IBV_QP_STATE, &init);
	if (!ret) {
		errno = 0;
		pd = ibv_alloc_pd(dev_a.ctx);
		ret = pd ? ibv_dealloc_pd(pd) : errno;
	}
	return ret;
}

/* The parent's thread: rounds until the child is done, and as many again. */
static void *parent_verbs(void *arg)
{
	unsigned int *failed = arg, n = 0, after = 0;
	int ret;

	while (after < rounds) {
		ret = verbs_round(true);
		if (ret && (*failed)++ < 5)
			printf("note: parent round %u: %s\n", n, strerror(ret));
		n++;
		if (__atomic_load_n(&child_done, __ATOMIC_ACQUIRE))
			after++;
	}
	printf("parent: %u rounds\n", n);
	return NULL;
}

/* The child: every round must succeed. */
static int child_verbs(void)
{
	unsigned int i, failed = 0;
	int ret;

	for (i = 0; i < rounds; i++) {
		ret = verbs_round(false);
		if (ret && failed++ < 5)
			printf("note: child round %u: %s\n", i, strerror(ret));
	}
	printf("child: %u of %u rounds succeeded\n", rounds - failed, rounds);
	return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct ibv_qp_cap cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
				  .max_recv_sge = 1 };
	unsigned int parent_failed = 0;
	pthread_t t;
	pid_t child;
	int status;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 3) {
		fprintf(stderr, "usage: fork_context DEV ROUNDS\n");
		return 2;
	}
	rounds = (unsigned int)atoi(argv[2]);
	if (!dev_open(&dev_a, argv[1]))
		goto out;
	cq = ibv_create_cq(dev_a.ctx, 8, NULL, NULL, 0);
	qp = cq ? qp_create(&dev_a, cq, cq, false, &cap) : NULL;
	if (!qp || pthread_create(&t, NULL, parent_verbs, &parent_failed)) {
		check(false, "CQ, QP and the parent's thread");
		goto out;
	}
	child = fork();
	if (child == 0)
		_exit(child_verbs());
	check(child > 0, "fork: %s", child < 0 ? strerror(errno) : "child started");
	status = 0;
	if (child > 0)
		waitpid(child, &status, 0);
	__atomic_store_n(&child_done, true, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	check(child > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "child: every verb on the inherited context succeeded");
	check(parent_failed == 0, "parent: every verb succeeded (%u failed)", parent_failed);
	check(verbs_round(true) == 0, "parent: the context works after the child exited");
out:
	if (qp)
		ibv_destroy_qp(qp);
	if (cq)
		ibv_destroy_cq(cq);
	dev_close(&dev_a);
	return checks_finish();
}
