/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Thread domains and parent domains through the public verbs API, with
 * mlx5's rules:
 * - ibv_alloc_td (comp_mask: EINVAL), ibv_dealloc_td EBUSY while a parent
 *   domain holds it;
 * - ibv_alloc_parent_domain (no PD, unknown comp_mask: EINVAL); the PD
 *   under it cannot be deallocated (EBUSY), nor the parent domain while
 *   CQs, QPs or SRQs hold it;
 * - allocators: called for the CQ, QP, SRQ and doorbell records with
 *   page-aligned sizes, pd_context passed back, every buffer freed once
 *   with its type; IBV_ALLOCATOR_USE_DEFAULT honoured; NULL fails the
 *   create with ENOMEM; a CQ with IBV_CQ_INIT_ATTR_MASK_PD on a plain PD
 *   is EINVAL;
 * - SEND and WRITE between a QP on device A and a QP, its CQs and MR all
 *   created on a parent domain of device B;
 * - without allocators, MLX_CQ_ALLOC_TYPE, MLX_QP_ALLOC_TYPE and
 *   MLX_SRQ_ALLOC_TYPE as mlx5_alloc_prefered_buf reads them: HUGE fails
 *   the create with the errno huge pages give here (ENOMEM when none are
 *   reserved), CONTIG with ENOSYS (no kernel gives contiguous pages),
 *   PREFER_HUGE, PREFER_CONTIG, ALL, ANON and unknown values fall back;
 *   a parent domain's allocators, even saying USE_DEFAULT, override them.
 *
 *   parent_domain DEVICE_A DEVICE_B   one line per check, then "N passed"
 *                                     and "N failed"; exit 0 when none failed
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/shm.h>
#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>
#include "tests/e2e/harness/verbs_pair.h"

#define MSG 2048
#define MAX_ALLOCS 16
/* MLX5DV_RES_TYPE_* is the driver id above 32 bits, 1..5 below. */
#define RES(type) ((type) & 0xffffffffu)
#define RES_KINDS 6

enum alloc_mode { GIVE_MEMORY, USE_DEFAULT, REFUSE };

/* What the allocators saw: pd_context points here. */
struct alloc_log {
	enum alloc_mode mode;
	struct ibv_pd *pd;		/* the parent domain they must be called with */
	unsigned int allocs[RES_KINDS], frees[RES_KINDS];	/* by RES(type) */
	bool bad_call;			/* wrong PD, size, alignment or type; a free of unknown memory */
	void *live[MAX_ALLOCS];
	uint64_t live_type[MAX_ALLOCS];
};

static void *log_alloc(struct ibv_pd *pd, void *pd_context, size_t size, size_t alignment,
		       uint64_t type)
{
	struct alloc_log *log = pd_context;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *p = NULL;

	if (pd != log->pd || type >> 32 != RDMA_DRIVER_MLX5 || RES(type) >= RES_KINDS || !size ||
	    (type == MLX5DV_RES_TYPE_DBR ? size != 8 || alignment != 8 : alignment != page || size % page)) {
		log->bad_call = true;
		return NULL;
	}
	log->allocs[RES(type)]++;
	if (log->mode == USE_DEFAULT)
		return IBV_ALLOCATOR_USE_DEFAULT;
	if (log->mode == REFUSE || posix_memalign(&p, alignment, size))
		return NULL;
	for (unsigned int i = 0; i < MAX_ALLOCS; i++) {
		if (!log->live[i]) {
			log->live[i] = p;
			log->live_type[i] = type;
			return p;
		}
	}
	free(p);
	return NULL;
}

static void log_free(struct ibv_pd *pd, void *pd_context, void *ptr, uint64_t type)
{
	struct alloc_log *log = pd_context;

	for (unsigned int i = 0; i < MAX_ALLOCS; i++) {
		if (ptr && log->live[i] == ptr && log->live_type[i] == type && pd == log->pd) {
			log->frees[RES(type)]++;
			log->live[i] = NULL;
			free(ptr);
			return;
		}
	}
	log->bad_call = true;
}

static struct ibv_pd *parent_domain(struct dev *d, struct ibv_td *td, struct alloc_log *log)
{
	struct ibv_parent_domain_init_attr attr = {
		.pd = d->pd, .td = td,
		.comp_mask = log ? IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
				   IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT : 0,
		.alloc = log_alloc, .free = log_free, .pd_context = log,
	};
	struct ibv_pd *pd = ibv_alloc_parent_domain(d->ctx, &attr);

	if (!pd)
		check(false, "%s: ibv_alloc_parent_domain: %s", d->name, strerror(errno));
	else if (log)
		log->pd = pd;
	return pd;
}

static struct ibv_cq *cq_on(struct ibv_context *ctx, struct ibv_pd *domain)
{
	struct ibv_cq_init_attr_ex attr = {
		.cqe = CQ_DEPTH, .wc_flags = IBV_WC_STANDARD_FLAGS,
		.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD, .parent_domain = domain,
	};
	struct ibv_cq_ex *cq = ibv_create_cq_ex(ctx, &attr);

	return cq ? ibv_cq_ex_to_cq(cq) : NULL;
}

static void thread_domains(void)
{
	struct ibv_td_init_attr bad = { .comp_mask = 1 }, good = { 0 };
	struct ibv_td *td;
	struct ibv_pd *pd;
	int ret;

	errno = 0;
	td = ibv_alloc_td(dev_b.ctx, &bad);
	check(!td && errno == EINVAL, "ibv_alloc_td with a comp_mask: EINVAL (%s)", strerror(errno));
	td = ibv_alloc_td(dev_b.ctx, &good);
	check(td && td->context == dev_b.ctx, "ibv_alloc_td: %s", td ? "ok" : strerror(errno));
	if (!td)
		return;
	pd = parent_domain(&dev_b, td, NULL);
	if (pd) {
		ret = ibv_dealloc_td(td);
		check(ret == EBUSY, "ibv_dealloc_td while a parent domain holds it: EBUSY (%s)", strerror(ret));
		ret = ibv_dealloc_pd(dev_b.pd);
		check(ret == EBUSY, "ibv_dealloc_pd of the PD under a parent domain: EBUSY (%s)",
		      strerror(ret));
		ret = ibv_dealloc_pd(pd);
		check(ret == 0, "ibv_dealloc_pd of the parent domain: %s", strerror(ret));
	}
	ret = ibv_dealloc_td(td);
	check(ret == 0, "ibv_dealloc_td once free: %s", strerror(ret));
}

static void domain_errors(void)
{
	struct ibv_parent_domain_init_attr attr = { .pd = NULL };
	struct ibv_pd *pd;
	struct ibv_cq *cq;

	errno = 0;
	pd = ibv_alloc_parent_domain(dev_b.ctx, &attr);
	check(!pd && errno == EINVAL, "ibv_alloc_parent_domain without a PD: EINVAL (%s)", strerror(errno));
	attr = (struct ibv_parent_domain_init_attr){ .pd = dev_b.pd, .comp_mask = 1u << 7 };
	errno = 0;
	pd = ibv_alloc_parent_domain(dev_b.ctx, &attr);
	check(!pd && errno == EINVAL, "an unknown comp_mask: EINVAL (%s)", strerror(errno));
	errno = 0;
	cq = cq_on(dev_b.ctx, dev_b.pd);
	check(!cq && errno == EINVAL, "a CQ with IBV_CQ_INIT_ATTR_MASK_PD on a plain PD: EINVAL (%s)",
	      strerror(errno));
	if (cq)
		ibv_destroy_cq(cq);
}

/* A QP, its CQs and an MR on a parent domain of device B, talking to a QP on device A. */
static void data_through(enum alloc_mode mode, const char *what)
{
	struct alloc_log log = { .mode = mode };
	struct dev on_domain = dev_b;
	struct side a, b = { .dev = &on_domain };
	struct ibv_srq_init_attr srq_attr = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_srq *srq = NULL;
	struct buf *src, *dst;
	struct ibv_pd *pd;
	int ret;

	pd = parent_domain(&dev_b, NULL, &log);
	if (!pd)
		return;
	on_domain.pd = pd;
	b.send_cq = cq_on(dev_b.ctx, pd);
	b.recv_cq = cq_on(dev_b.ctx, pd);
	check(b.send_cq && b.recv_cq, "%s: CQs on the parent domain: %s", what,
	      b.send_cq && b.recv_cq ? "ok" : strerror(errno));
	b.cap = side_default.cap;
	if (!b.send_cq || !b.recv_cq || !(b.qp = qp_create(&on_domain, b.send_cq, b.recv_cq, false, &b.cap)))
		goto out;
	srq = ibv_create_srq(pd, &srq_attr);
	check(srq != NULL, "%s: an SRQ on the parent domain: %s", what, srq ? "ok" : strerror(errno));
	check(log.allocs[RES(MLX5DV_RES_TYPE_CQ)] == 2 && log.allocs[RES(MLX5DV_RES_TYPE_QP)] == 1 &&
	      log.allocs[RES(MLX5DV_RES_TYPE_SRQ)] == 1 && log.allocs[RES(MLX5DV_RES_TYPE_DBR)] == 4 && !log.bad_call,
	      "%s: alloc called for 2 CQs, the QP, the SRQ and 4 doorbell records, page aligned (%u %u %u %u)",
	      what, log.allocs[RES(MLX5DV_RES_TYPE_CQ)], log.allocs[RES(MLX5DV_RES_TYPE_QP)],
	      log.allocs[RES(MLX5DV_RES_TYPE_SRQ)], log.allocs[RES(MLX5DV_RES_TYPE_DBR)]);
	ret = ibv_dealloc_pd(pd);
	check(ret == EBUSY, "%s: ibv_dealloc_pd of the parent domain while its QP lives: EBUSY (%s)",
	      what, strerror(ret));
	if (!side_open(&a, &dev_a, &side_default))
		goto out_a;
	ret = qp_connect(a.qp, b.qp->qp_num, &dev_b.gid, PSN_A, PSN_B, &side_default.knobs);
	if (!ret)
		ret = qp_connect(b.qp, a.qp->qp_num, &dev_a.gid, PSN_B, PSN_A, &side_default.knobs);
	check(ret == 0, "%s: QPs connected: %s", what, strerror(ret));
	src = buf_new(&dev_a, MSG, MSG, IBV_ACCESS_LOCAL_WRITE, 0);
	dst = buf_new(&on_domain, MSG, MSG, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, UNTOUCHED);
	if (ret || !src || !dst)
		goto out_bufs;
	fill_pattern(src->p, MSG, 9, 0);
	{
		struct ibv_sge rsge = sge_of(dst, 0, MSG), ssge = sge_of(src, 0, MSG);
		struct ibv_recv_wr rwr = { .wr_id = 1, .sg_list = &rsge, .num_sge = 1 };
		struct ibv_send_wr swr = { .wr_id = 2, .sg_list = &ssge, .num_sge = 1,
					   .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };

		if (post_recv(b.qp, &rwr, what) && post_send(a.qp, &swr, what) &&
		    expect_wc(a.send_cq, what, (struct want){ 2, IBV_WC_SUCCESS, IBV_WC_SEND, -1 }, NULL) &&
		    expect_wc(b.recv_cq, what, (struct want){ 1, IBV_WC_SUCCESS, IBV_WC_RECV, MSG }, NULL))
			check_pattern(dst->p, MSG, 9, 0, "SEND into a QP on the parent domain");
		fill_pattern(src->p, MSG, 10, 0);
		swr = (struct ibv_send_wr){ .wr_id = 3, .sg_list = &ssge, .num_sge = 1,
					    .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
					    .wr.rdma = { .remote_addr = raddr_of(dst, 0), .rkey = dst->mr->rkey } };
		if (post_send(a.qp, &swr, what) &&
		    expect_wc(a.send_cq, what, (struct want){ 3, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, -1 }, NULL))
			check_pattern(dst->p, MSG, 10, 0, "WRITE into an MR on the parent domain");
	}
out_bufs:
	bufs_free();
	side_close(&a);
out_a:
	if (srq)
		ibv_destroy_srq(srq);
	side_close(&b);
	if (mode == GIVE_MEMORY)
		check(log.frees[RES(MLX5DV_RES_TYPE_CQ)] == 2 && log.frees[RES(MLX5DV_RES_TYPE_QP)] == 1 &&
		      log.frees[RES(MLX5DV_RES_TYPE_SRQ)] == 1 && log.frees[RES(MLX5DV_RES_TYPE_DBR)] == 4 &&
		      !log.bad_call, "%s: free called once for each buffer, with its type", what);
	else
		check(!log.frees[RES(MLX5DV_RES_TYPE_CQ)] && !log.frees[RES(MLX5DV_RES_TYPE_DBR)] && !log.bad_call,
		      "%s: IBV_ALLOCATOR_USE_DEFAULT: free never called", what);
out:
	if (b.send_cq || b.recv_cq)
		side_close(&b);
	ret = ibv_dealloc_pd(pd);
	check(ret == 0, "%s: ibv_dealloc_pd of the parent domain once empty: %s", what, strerror(ret));
}

static void allocator_memory(void)
{
	data_through(GIVE_MEMORY, "allocator gives memory");
}

static void allocator_default(void)
{
	data_through(USE_DEFAULT, "allocator says USE_DEFAULT");
}

static void allocator_refuses(void)
{
	struct alloc_log log = { .mode = REFUSE };
	struct ibv_qp_cap cap = side_default.cap;
	struct ibv_qp_init_attr attr = { .qp_type = IBV_QPT_RC, .cap = cap };
	struct ibv_cq *cq;
	struct ibv_pd *pd;
	struct ibv_qp *qp;

	pd = parent_domain(&dev_b, NULL, &log);
	if (!pd)
		return;
	errno = 0;
	cq = cq_on(dev_b.ctx, pd);
	check(!cq && errno == ENOMEM, "an allocator giving NULL fails ibv_create_cq_ex: ENOMEM (%s)",
	      strerror(errno));
	if (cq)
		ibv_destroy_cq(cq);
	cq = ibv_create_cq(dev_b.ctx, CQ_DEPTH, NULL, NULL, 0);
	attr.send_cq = attr.recv_cq = cq;
	errno = 0;
	qp = cq ? ibv_create_qp(pd, &attr) : NULL;
	check(!qp && errno == ENOMEM, "... and ibv_create_qp: ENOMEM (%s)", strerror(errno));
	if (qp)
		ibv_destroy_qp(qp);
	if (cq)
		ibv_destroy_cq(cq);
	check(ibv_dealloc_pd(pd) == 0, "the parent domain deallocates: nothing holds it");
}

/* What mlx5's alloc_huge_mem gets here for a segment of huge pages: 0 or shmget's errno. */
static int huge_pages_errno(void)
{
	int id = shmget(IPC_PRIVATE, 2UL << 20, SHM_HUGETLB | SHM_R | SHM_W);

	if (id < 0)
		return errno;
	shmctl(id, IPC_RMID, NULL);
	return 0;
}

/* Each creates one object on device A's PD (or parent domain pd) and destroys it: 0 or errno. */
static int cq_errno(struct ibv_pd *pd)
{
	struct ibv_cq *cq = pd == dev_a.pd ? ibv_create_cq(dev_a.ctx, CQ_DEPTH, NULL, NULL, 0) :
					     cq_on(dev_a.ctx, pd);

	return cq ? ibv_destroy_cq(cq) : errno;
}

static int qp_errno(struct ibv_pd *pd)
{
	struct ibv_qp_init_attr attr = { .qp_type = IBV_QPT_RC, .cap = side_default.cap };
	struct ibv_cq *cq = ibv_create_cq(dev_a.ctx, CQ_DEPTH, NULL, NULL, 0);
	struct ibv_qp *qp;
	int err;

	if (!cq)
		return errno;
	attr.send_cq = attr.recv_cq = cq;
	qp = ibv_create_qp(pd, &attr);
	err = qp ? ibv_destroy_qp(qp) : errno;
	ibv_destroy_cq(cq);
	return err;
}

static int srq_errno(struct ibv_pd *pd)
{
	struct ibv_srq_init_attr attr = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(pd, &attr);

	return srq ? ibv_destroy_srq(srq) : errno;
}

static const struct {
	const char *var;
	int (*create)(struct ibv_pd *pd);
	const char *what;
} alloc_type_objects[] = {
	{ "MLX_CQ_ALLOC_TYPE", cq_errno, "CQ" },
	{ "MLX_QP_ALLOC_TYPE", qp_errno, "QP" },
	{ "MLX_SRQ_ALLOC_TYPE", srq_errno, "SRQ" },
};

/* A create with var=value: want is its errno value, 0 for success. */
static void expect_alloc_type(unsigned int obj, struct ibv_pd *pd, const char *value, int want,
			      const char *on)
{
	int got;

	setenv(alloc_type_objects[obj].var, value, 1);
	got = alloc_type_objects[obj].create(pd);
	unsetenv(alloc_type_objects[obj].var);
	check(got == want, "%s=%s: create %s%s -> %s (got %s)", alloc_type_objects[obj].var, value,
	      alloc_type_objects[obj].what, on, want ? strerror(want) : "success",
	      got ? strerror(got) : "success");
}

static void alloc_types(void)
{
	static const char *const fall_back[] = { "PREFER_HUGE", "PREFER_CONTIG", "ALL", "ANON",
						 "bogus" };
	int huge = huge_pages_errno();
	struct alloc_log log[2] = { { .mode = GIVE_MEMORY }, { .mode = USE_DEFAULT } };
	struct ibv_pd *pd;
	unsigned int obj, i;

	printf("note: a segment of huge pages here: %s\n", huge ? strerror(huge) : "available");
	for (obj = 0; obj < sizeof(alloc_type_objects) / sizeof(alloc_type_objects[0]); obj++) {
		expect_alloc_type(obj, dev_a.pd, "HUGE", huge, "");
		expect_alloc_type(obj, dev_a.pd, "huge", huge, "");
		expect_alloc_type(obj, dev_a.pd, "CONTIG", ENOSYS, "");
		for (i = 0; i < sizeof(fall_back) / sizeof(fall_back[0]); i++)
			expect_alloc_type(obj, dev_a.pd, fall_back[i], 0, "");
		for (i = 0; i < 2; i++) {
			pd = parent_domain(&dev_a, NULL, &log[i]);
			if (!pd)
				return;
			expect_alloc_type(obj, pd, "CONTIG", 0, i ? " on USE_DEFAULT allocators" :
							      " on allocators");
			ibv_dealloc_pd(pd);
		}
	}
}

static const struct named_check checks[] = {
	{ "thread domains", thread_domains },
	{ "parent domain errors", domain_errors },
	{ "allocators giving memory", allocator_memory },
	{ "allocators saying USE_DEFAULT", allocator_default },
	{ "allocators refusing", allocator_refuses },
	{ "MLX_*_ALLOC_TYPE without allocators", alloc_types },
};

int main(int argc, char **argv)
{
	return run_checks_main(argc, argv, checks, sizeof(checks) / sizeof(checks[0]));
}
