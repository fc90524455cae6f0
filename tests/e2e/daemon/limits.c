/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * A client that runs into its limits, and one whose latency is watched:
 *   limits DEVICE fill KIND MAX   create KIND (pd mr mw cq qp srq dm xrcd channel cm_id ctx)
 *                                 until one fails or MAX exist
 *   limits DEVICE bigcq MAX       create CQs of the most entries until one fails or MAX exist
 *   limits DEVICE pin MIB         register non-ODP MRs of MIB MiB until one fails,
 *                                 then one ODP MR of 256 MiB
 *   limits DEVICE churn CQE SECS  create and destroy CQs of CQE entries for SECS s
 *   limits DEVICE pingpong SECS   64-byte SENDs back and forth between two RC QPs for SECS s
 * fill, bigcq and pin print "KIND made N errno NAME" (NAME "none" when MAX
 * were made), then "ready", and hold what they made until stdin closes.
 * churn prints "churn N creates, slowest US us, first error NAME";
 * pingpong "pingpong rounds N max_us US". Exit 0, or 1 with the reason.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "tests/e2e/harness/verbs_pair.h"

#define MAX_CQE 4194303		/* a ConnectX's max_cqe */
#define MSG_BYTES 64

static const char *errno_name(int e)
{
	switch (e) {
	case 0: return "none";
	case EAGAIN: return "EAGAIN";
	case ENOMEM: return "ENOMEM";
	case EMFILE: return "EMFILE";
	case EINVAL: return "EINVAL";
	default: return strerror(e);
	}
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* Block until stdin reaches end of file (the test closes it, or dies). */
static void hold(void)
{
	char buf[64];

	printf("ready\n");
	fflush(stdout);
	while (read(STDIN_FILENO, buf, sizeof(buf)) > 0 || errno == EINTR)
		errno = 0;
}

static struct ibv_context *open_named(const char *name)
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

/* One more object of kind on d: 0, or the errno of its failure. */
static int make_one(const char *kind, struct dev *d, struct ibv_cq *cq, void *page,
		    struct rdma_event_channel *cm)
{
	struct ibv_qp_init_attr qp_attr = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
					    .cap = { .max_send_wr = 1, .max_recv_wr = 1,
						     .max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_srq_init_attr srq_attr = { .attr = { .max_wr = 1, .max_sge = 1 } };
	struct ibv_xrcd_init_attr xrcd_attr = { .comp_mask = IBV_XRCD_INIT_ATTR_FD |
							     IBV_XRCD_INIT_ATTR_OFLAGS,
						.fd = -1, .oflags = O_CREAT };
	struct ibv_alloc_dm_attr dm_attr = { .length = 64 };
	struct rdma_cm_id *id;
	void *obj;

	errno = 0;
	if (!strcmp(kind, "pd"))
		obj = ibv_alloc_pd(d->ctx);
	else if (!strcmp(kind, "mr"))
		obj = ibv_reg_mr(d->pd, page, 4096, IBV_ACCESS_LOCAL_WRITE);
	else if (!strcmp(kind, "mw"))
		obj = ibv_alloc_mw(d->pd, IBV_MW_TYPE_2);
	else if (!strcmp(kind, "cq"))
		obj = ibv_create_cq(d->ctx, 1, NULL, NULL, 0);
	else if (!strcmp(kind, "qp"))
		obj = ibv_create_qp(d->pd, &qp_attr);
	else if (!strcmp(kind, "srq"))
		obj = ibv_create_srq(d->pd, &srq_attr);
	else if (!strcmp(kind, "dm"))
		obj = ibv_alloc_dm(d->ctx, &dm_attr);
	else if (!strcmp(kind, "xrcd"))
		obj = ibv_open_xrcd(d->ctx, &xrcd_attr);
	else if (!strcmp(kind, "channel"))
		obj = ibv_create_comp_channel(d->ctx);
	else if (!strcmp(kind, "ctx"))
		obj = open_named(d->name);
	else if (!strcmp(kind, "cm_id"))
		obj = rdma_create_id(cm, &id, NULL, RDMA_PS_TCP) ? NULL : id;
	else
		return EINVAL;
	return obj ? 0 : (errno ? errno : EIO);
}

static int fill(struct dev *d, const char *kind, long max)
{
	struct rdma_event_channel *cm = NULL;
	struct ibv_cq *cq = NULL;
	void *page = NULL;
	long made = 0;
	int err = 0;

	if (!strcmp(kind, "qp"))
		cq = ibv_create_cq(d->ctx, 2, NULL, NULL, 0);
	if (!strcmp(kind, "mr"))
		page = aligned_alloc(4096, 4096);
	if (!strcmp(kind, "cm_id"))
		cm = rdma_create_event_channel();
	if ((!strcmp(kind, "qp") && !cq) || (!strcmp(kind, "mr") && !page) ||
	    (!strcmp(kind, "cm_id") && !cm)) {
		printf("FAIL: what %s needs: %s\n", kind, strerror(errno));
		return 1;
	}
	while (made < max && !(err = make_one(kind, d, cq, page, cm)))
		made++;
	printf("%s made %ld errno %s\n", kind, made, errno_name(err));
	hold();
	return 0;
}

static int bigcq(struct dev *d, long max)
{
	long made = 0;
	int err = 0;

	while (made < max) {
		if (!ibv_create_cq(d->ctx, MAX_CQE, NULL, NULL, 0)) {
			err = errno;
			break;
		}
		made++;
	}
	printf("bigcq made %ld errno %s\n", made, errno_name(err));
	hold();
	return 0;
}

static int pin(struct dev *d, long mib)
{
	size_t each = (size_t)mib << 20, span = 64 * each;
	/* Mapped, never touched: registration checks the mapping, pinning is what is charged. */
	char *mem = mmap(NULL, span, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	long made = 0;
	int err = 0;

	if (mem == MAP_FAILED) {
		printf("FAIL: mmap of %zu bytes: %s\n", span, strerror(errno));
		return 1;
	}
	while (made < 64) {
		if (!ibv_reg_mr(d->pd, mem + made * each, each, IBV_ACCESS_LOCAL_WRITE)) {
			err = errno;
			break;
		}
		made++;
	}
	printf("pin made %ld bytes %zu errno %s\n", made, made * each, errno_name(err));
	err = ibv_reg_mr(d->pd, mem, span < (256u << 20) ? span : 256u << 20,
			 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND) ? 0 : errno;
	printf("odp errno %s\n", errno_name(err));
	hold();
	return 0;
}

static int churn(struct dev *d, int cqe, long secs)
{
	double start = now_us(), slowest = 0;
	long creates = 0;
	int first_err = 0;

	while (now_us() - start < secs * 1e6) {
		double t = now_us();
		struct ibv_cq *cq = ibv_create_cq(d->ctx, cqe, NULL, NULL, 0);

		if (now_us() - t > slowest)
			slowest = now_us() - t;
		if (!cq) {
			first_err = first_err ? first_err : errno;
			continue;
		}
		creates++;
		ibv_destroy_cq(cq);
	}
	printf("churn %ld creates, slowest %.0f us, first error %s\n", creates, slowest,
	       errno_name(first_err));
	return 0;
}

/* One SEND from s to r and back: false when a completion fails or never comes. */
static bool round_trip(struct side *s, struct side *r, struct buf *sb, struct buf *rb)
{
	struct ibv_sge ssge = sge_of(sb, 0, MSG_BYTES), rsge = sge_of(rb, 0, MSG_BYTES);
	struct ibv_recv_wr rwr = { .wr_id = 2, .sg_list = &rsge, .num_sge = 1 };
	struct ibv_send_wr swr = { .wr_id = 1, .sg_list = &ssge, .num_sge = 1,
				   .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
	struct ibv_wc wc;

	return post_recv(r->qp, &rwr, "receive") && post_send(s->qp, &swr, "send") &&
	       wait_wc(r->recv_cq, &wc) == 1 && wc.status == IBV_WC_SUCCESS &&
	       wait_wc(s->send_cq, &wc) == 1 && wc.status == IBV_WC_SUCCESS;
}

static int pingpong(long secs)
{
	struct buf *ab, *bb;
	struct pair p;
	double start, worst = 0;
	long rounds = 0;

	if (!dev_open(&dev_b, dev_a.name) || !pair_open(&p, &side_default, &side_default))
		return 1;
	ab = buf_new(&dev_a, MSG_BYTES, MSG_BYTES, IBV_ACCESS_LOCAL_WRITE, 0);
	bb = buf_new(&dev_b, MSG_BYTES, MSG_BYTES, IBV_ACCESS_LOCAL_WRITE, 0);
	if (!ab || !bb)
		return 1;
	start = now_us();
	while (now_us() - start < secs * 1e6) {
		double t = now_us();

		if (!round_trip(&p.a, &p.b, ab, bb) || !round_trip(&p.b, &p.a, bb, ab)) {
			printf("FAIL: round %ld did not complete\n", rounds);
			return 1;
		}
		if (now_us() - t > worst)
			worst = now_us() - t;
		rounds++;
	}
	printf("pingpong rounds %ld max_us %.0f\n", rounds, worst);
	pair_close(&p);
	bufs_free();
	return 0;
}

int main(int argc, char **argv)
{
	long n;

	if (argc != 4 && !(argc == 5 && (!strcmp(argv[2], "fill") || !strcmp(argv[2], "churn")))) {
		fprintf(stderr, "usage: limits DEVICE fill KIND MAX | bigcq MAX | pin MIB | "
				"churn CQE SECS | pingpong SECS\n");
		return 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	n = strtol(argv[argc - 1], NULL, 10);
	if (!strcmp(argv[2], "pingpong"))
		return dev_open(&dev_a, argv[1]) ? pingpong(n) : 1;
	if (!dev_open(&dev_a, argv[1]))
		return 1;
	if (!strcmp(argv[2], "fill"))
		return fill(&dev_a, argv[3], n);
	if (!strcmp(argv[2], "bigcq"))
		return bigcq(&dev_a, n);
	if (!strcmp(argv[2], "pin"))
		return pin(&dev_a, n);
	if (!strcmp(argv[2], "churn"))
		return churn(&dev_a, (int)strtol(argv[3], NULL, 10), n);
	fprintf(stderr, "limits: unknown mode %s\n", argv[2]);
	return 1;
}
