/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * An event channel closed by one thread while another is inside
 * rdma_get_cm_event, as rping's main thread does under its CM thread: on
 * the kernel's file the write() in progress holds the file, so it returns
 * its event and the file goes when it is done. The window is held open
 * deterministically: this program interposes read() and sendmsg() for the
 * thread in GET_EVENT and stops it just before it reads the event's byte
 * (case "byte"), or just before it asks the daemon for the event (case
 * "ask"), until the main thread has closed the descriptor.
 *
 * usage: cm_close_race ADDR_OF_NO_DEVICE
 * Prints "ok: ..." per check and "N failed" last; exits 0 when none failed.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <rdma/rdma_cma.h>

#include "tests/e2e/harness/check_line.h"

#define WAIT_MS 10000

enum stop_at { STOP_NOWHERE, STOP_BEFORE_BYTE, STOP_BEFORE_ASK };

static __thread enum stop_at stop_here;	/* set in the GET_EVENT thread only */
static sem_t at_window, closed;

/* The GET_EVENT thread reached the window: let the main thread close, then go on. */
static void hold_window(enum stop_at where)
{
	if (stop_here != where)
		return;
	stop_here = STOP_NOWHERE;
	sem_post(&at_window);
	sem_wait(&closed);
}

ssize_t read(int fd, void *buf, size_t n)
{
	static ssize_t (*next)(int, void *, size_t);

	if (!next)
		next = (ssize_t (*)(int, void *, size_t))dlsym(RTLD_NEXT, "read");
	if (n == 1)	/* the event's byte */
		hold_window(STOP_BEFORE_BYTE);
	return next(fd, buf, n);
}

ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	static ssize_t (*next)(int, const struct msghdr *, int);

	if (!next)
		next = (ssize_t (*)(int, const struct msghdr *, int))dlsym(RTLD_NEXT, "sendmsg");
	hold_window(STOP_BEFORE_ASK);
	return next(fd, msg, flags);
}

struct getter {
	struct rdma_event_channel *ch;
	enum stop_at where;
	int ret, err;
	struct rdma_cm_event *ev;
};

static void *get_event(void *arg)
{
	struct getter *g = arg;

	stop_here = g->where;
	g->ret = rdma_get_cm_event(g->ch, &g->ev);
	g->err = errno;
	return NULL;
}

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/*
 * A channel with one event queued, or NULL: ADDR_ERROR of an id resolving
 * dst, which no device has, an event librdmacm hands out without another
 * write (after ADDR_RESOLVED it would query the closed file).
 */
static struct rdma_event_channel *channel_with_event(struct sockaddr_in *dst)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct pollfd pfd;
	struct rdma_cm_id *id;

	if (!ch)
		return NULL;
	pfd = (struct pollfd){ .fd = ch->fd, .events = POLLIN };
	if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(id, NULL, (struct sockaddr *)dst, WAIT_MS) ||
	    poll(&pfd, 1, WAIT_MS) != 1) {
		perror("an event to wait for");
		return NULL;
	}
	return ch;
}

static void close_under_get_event(struct sockaddr_in *dst, enum stop_at where, const char *what)
{
	struct getter g = { .where = where };
	struct timespec deadline;
	pthread_t t;
	int fds_before = open_fds();

	g.ch = channel_with_event(dst);
	if (!g.ch) {
		CHECK(0, "%s: a channel with an event", what);
		return;
	}
	if (pthread_create(&t, NULL, get_event, &g)) {
		CHECK(0, "%s: a thread", what);
		return;
	}
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += WAIT_MS / 1000;
	if (sem_timedwait(&at_window, &deadline)) {
		CHECK(0, "%s: the GET_EVENT thread reached the window", what);
		exit(1);
	}
	close(g.ch->fd);
	sem_post(&closed);
	pthread_join(t, NULL);
	CHECK(g.ret == 0 && g.ev && g.ev->event == RDMA_CM_EVENT_ADDR_ERROR &&
	      g.ev->status == -ENODEV,
	      "%s: rdma_get_cm_event returns its event (ret %d, %s, %s status %d)", what, g.ret,
	      g.ret ? strerror(g.err) : "no error",
	      g.ret ? "no event" : rdma_event_str(g.ev->event), g.ret ? 0 : g.ev->status);
	if (!g.ret)
		rdma_ack_cm_event(g.ev);
	/* The file goes with the last thread in it: nothing of it stays open. */
	CHECK(open_fds() == fds_before, "%s: descriptors open before %d, after %d", what,
	      fds_before, open_fds());
}

int main(int argc, char **argv)
{
	struct sockaddr_in dst = { .sin_family = AF_INET };
	struct rdma_event_channel *warm;

	if (argc != 2 || inet_pton(AF_INET, argv[1], &dst.sin_addr) != 1) {
		fprintf(stderr, "usage: %s ADDR_OF_NO_DEVICE\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	sem_init(&at_window, 0, 0);
	sem_init(&closed, 0, 0);
	/* librdmacm opens its devices once, on the first channel. */
	warm = rdma_create_event_channel();
	if (!warm) {
		perror("rdma_create_event_channel");
		return 1;
	}
	rdma_destroy_event_channel(warm);
	close_under_get_event(&dst, STOP_BEFORE_BYTE, "closed before the event's byte is read");
	close_under_get_event(&dst, STOP_BEFORE_ASK, "closed before the event is asked for");
	printf("%d failed\n", failed);
	return failed ? 1 : 0;
}
