/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * On-demand paging through the public verbs API:
 * - odp_caps read as a ConnectX-5 on RoCE reports them;
 * - an explicit ODP MR over memory with a hole registers (a plain MR
 *   there fails with EFAULT); WRITE, READ and SEND into pages never
 *   touched (MAP_NORESERVE) land; RDMA into the hole fails with
 *   REM_ACCESS_ERR as an unresolved page fault does, and once the hole is
 *   mapped, RDMA into it lands;
 * - the implicit ODP MR (NULL, SIZE_MAX) reaches memory mapped after it
 *   was registered, as rkey and as lkey (WRITE, READ, SEND); an unmapped
 *   address through it fails: REM_ACCESS_ERR remotely, LOC_PROT_ERR for a
 *   local SGE; registration errnos as mlx5's;
 * - ibv_advise_mr: errnos as uverbs and mlx5 give them, PREFETCH_WRITE
 *   with FLUSH makes untouched pages resident (mincore), NO_FAULT does
 *   not, FLUSH over an unmapped address is EFAULT, a list longer than one
 *   control message.
 *
 * QP "a" is the requester on device A, "b" the responder on device B,
 * a fresh pair per check.
 *
 *   odp DEVICE_A DEVICE_B   one line per check, then "N passed" and
 *                           "N failed"; exit 0 when none failed
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include "tests/e2e/harness/verbs_pair.h"

#define RW (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)
#define ODP_RW (RW | IBV_ACCESS_ON_DEMAND)
#define MSG 3000		/* spans a page boundary */
#define REGION (64UL << 20)	/* an untouched MAP_NORESERVE region */

static size_t page;

static void *map_anon(void *at, size_t len, int flags)
{
	void *p = mmap(at, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static bool resident(const void *p, size_t len)
{
	unsigned char vec[64];
	size_t n = (len + page - 1) / page;

	if (n > sizeof(vec) || mincore((void *)p, len, vec))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!(vec[i] & 1))
			return false;
	return true;
}

/* One signaled WR of opcode between local and [raddr, rkey], completing as want. */
static bool rdma(struct pair *p, enum ibv_wr_opcode opcode, void *local, uint32_t lkey,
		 uint64_t raddr, uint32_t rkey, enum ibv_wc_status want, const char *what)
{
	struct ibv_sge sge = { .addr = (uintptr_t)local, .length = MSG, .lkey = lkey };
	struct ibv_send_wr wr = {
		.wr_id = 0x71, .sg_list = &sge, .num_sge = 1, .opcode = opcode,
		.send_flags = IBV_SEND_SIGNALED, .wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	};

	return post_send(p->a.qp, &wr, what) &&
	       expect_wc(p->a.send_cq, what, (struct want){ 0x71, want, -1, -1 }, NULL);
}

/* A SEND of MSG bytes from local into a receive WQE at recv on b; both complete. */
static bool send_into(struct pair *p, void *local, uint32_t lkey, void *recv, uint32_t rkey_l,
		      const char *what)
{
	struct ibv_sge rsge = { .addr = (uintptr_t)recv, .length = MSG, .lkey = rkey_l };
	struct ibv_recv_wr rwr = { .wr_id = 0x72, .sg_list = &rsge, .num_sge = 1 };

	return post_recv(p->b.qp, &rwr, what) &&
	       rdma(p, IBV_WR_SEND, local, lkey, 0, 0, IBV_WC_SUCCESS, what) &&
	       expect_wc(p->b.recv_cq, what, (struct want){ 0x72, IBV_WC_SUCCESS, IBV_WC_RECV, MSG }, NULL);
}

static void caps(void)
{
	struct ibv_device_attr_ex attr;
	int ret = ibv_query_device_ex(dev_a.ctx, NULL, &attr);

	check(ret == 0, "ibv_query_device_ex: %s", strerror(ret));
	check(attr.odp_caps.general_caps == (IBV_ODP_SUPPORT | IBV_ODP_SUPPORT_IMPLICIT),
	      "general_caps ODP_SUPPORT and ODP_SUPPORT_IMPLICIT (0x%llx)",
	      (unsigned long long)attr.odp_caps.general_caps);
	check(attr.odp_caps.per_transport_caps.rc_odp_caps ==
	      (IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV | IBV_ODP_SUPPORT_WRITE |
	       IBV_ODP_SUPPORT_READ | IBV_ODP_SUPPORT_ATOMIC | IBV_ODP_SUPPORT_SRQ_RECV),
	      "rc_odp_caps SEND RECV WRITE READ ATOMIC SRQ_RECV (0x%x)",
	      attr.odp_caps.per_transport_caps.rc_odp_caps);
	check(attr.odp_caps.per_transport_caps.uc_odp_caps == 0 &&
	      attr.odp_caps.per_transport_caps.ud_odp_caps == IBV_ODP_SUPPORT_SEND,
	      "uc_odp_caps none, ud_odp_caps SEND (0x%x, 0x%x)",
	      attr.odp_caps.per_transport_caps.uc_odp_caps, attr.odp_caps.per_transport_caps.ud_odp_caps);
}

/* Explicit ODP MRs: untouched pages, a hole that fails, then is mapped and works. */
static void explicit_mr(void)
{
	uint8_t *region = map_anon(NULL, REGION, MAP_NORESERVE), *hole;
	struct buf *local = buf_new(&dev_a, MSG, MSG, IBV_ACCESS_LOCAL_WRITE, 0);
	struct ibv_mr *mr = NULL, *plain;
	uint8_t *out;
	struct pair p;

	if (!region || !local) {
		check(false, "mapping %lu bytes: %s", REGION, strerror(errno));
		return;
	}
	hole = region + REGION / 2;
	munmap(hole, 4 * page);
	errno = 0;
	plain = ibv_reg_mr(dev_b.pd, region, REGION, RW);
	check(!plain && errno == EFAULT, "a plain MR over a hole fails with EFAULT (%s)", strerror(errno));
	if (plain)
		ibv_dereg_mr(plain);
	mr = ibv_reg_mr(dev_b.pd, region, REGION, ODP_RW);
	check(mr != NULL, "an ODP MR over the same range registers: %s", mr ? "ok" : strerror(errno));
	if (!mr || !pair_open(&p, &side_default, &side_default))
		goto out;
	fill_pattern(local->p, MSG, 1, 0);
	if (rdma(&p, IBV_WR_RDMA_WRITE, local->p, local->mr->lkey, (uintptr_t)region + REGION / 4 - 100,
		 mr->rkey, IBV_WC_SUCCESS, "WRITE into untouched pages"))
		check_pattern(region + REGION / 4 - 100, MSG, 1, 0, "WRITE into untouched pages");
	memset(local->p, 0x77, MSG);
	if (rdma(&p, IBV_WR_RDMA_READ, local->p, local->mr->lkey, (uintptr_t)region + REGION - MSG - 7,
		 mr->rkey, IBV_WC_SUCCESS, "READ of untouched pages"))
		check(all_bytes(local->p, MSG, 0), "READ of untouched pages gives zeros");
	fill_pattern(local->p, MSG, 2, 0);
	if (send_into(&p, local->p, local->mr->lkey, region + 3 * page - 5, mr->lkey,
		      "SEND into untouched pages"))
		check_pattern(region + 3 * page - 5, MSG, 2, 0, "SEND into untouched pages");
	rdma(&p, IBV_WR_RDMA_WRITE, local->p, local->mr->lkey, (uintptr_t)hole + 8, mr->rkey,
	     IBV_WC_REM_ACCESS_ERR, "WRITE into the hole: an unresolved fault");
	pair_close(&p);

	out = map_anon(hole, 4 * page, MAP_FIXED);
	check(out == hole, "the hole mapped after registration");
	if (!out || !pair_open(&p, &side_default, &side_default))
		goto out;
	fill_pattern(local->p, MSG, 3, 0);
	if (rdma(&p, IBV_WR_RDMA_WRITE, local->p, local->mr->lkey, (uintptr_t)hole + 8, mr->rkey,
		 IBV_WC_SUCCESS, "WRITE into the hole once mapped"))
		check_pattern(hole + 8, MSG, 3, 0, "WRITE into the hole once mapped");
	memset(local->p, 0, MSG);
	if (rdma(&p, IBV_WR_RDMA_READ, local->p, local->mr->lkey, (uintptr_t)hole + 8, mr->rkey,
		 IBV_WC_SUCCESS, "READ from the hole once mapped"))
		check_pattern(local->p, MSG, 3, 0, "READ from the hole once mapped");
	pair_close(&p);
out:
	if (mr)
		check(ibv_dereg_mr(mr) == 0, "ibv_dereg_mr of the ODP MR");
	munmap(region, REGION);
	bufs_free();
}

/* The implicit MR: memory mapped after registration, on both sides; unmapped addresses. */
static void implicit_mr(void)
{
	struct ibv_mr *ia = NULL, *ib = NULL, *bad;
	uint8_t *ma = NULL, *mb = NULL;
	struct pair p;

	errno = 0;
	bad = ibv_reg_mr_iova(dev_b.pd, NULL, SIZE_MAX, page, ODP_RW);
	check(!bad && errno == EINVAL, "implicit MR with an iova: EINVAL (%s)", strerror(errno));
	errno = 0;
	bad = ibv_reg_mr(dev_b.pd, NULL, SIZE_MAX, RW);
	check(!bad && errno == EINVAL, "NULL, SIZE_MAX without ON_DEMAND: EINVAL (%s)", strerror(errno));
	ia = ibv_reg_mr(dev_a.pd, NULL, SIZE_MAX, ODP_RW);
	ib = ibv_reg_mr(dev_b.pd, NULL, SIZE_MAX, ODP_RW | IBV_ACCESS_REMOTE_ATOMIC);
	check(ia && ib, "implicit ODP MRs register: %s", ia && ib ? "ok" : strerror(errno));
	if (!ia || !ib || !pair_open(&p, &side_default, &side_default))
		goto out;
	/* Mapped only now, after the MRs: mmap after reg. */
	ma = map_anon(NULL, 16 * page, 0);
	mb = map_anon(NULL, 16 * page, MAP_NORESERVE);
	if (!ma || !mb) {
		check(false, "mmap: %s", strerror(errno));
		goto close;
	}
	fill_pattern(ma, MSG, 4, 0);
	if (rdma(&p, IBV_WR_RDMA_WRITE, ma, ia->lkey, (uintptr_t)mb + page + 1, ib->rkey,
		 IBV_WC_SUCCESS, "implicit: WRITE into memory mapped after reg"))
		check_pattern(mb + page + 1, MSG, 4, 0, "implicit: WRITE into memory mapped after reg");
	if (rdma(&p, IBV_WR_RDMA_READ, ma + 4 * page, ia->lkey, (uintptr_t)mb + page + 1, ib->rkey,
		 IBV_WC_SUCCESS, "implicit: READ of it"))
		check_pattern(ma + 4 * page, MSG, 4, 0, "implicit: READ of it");
	fill_pattern(ma, MSG, 5, 0);
	if (send_into(&p, ma, ia->lkey, mb + 8 * page - 9, ib->lkey, "implicit: SEND into it"))
		check_pattern(mb + 8 * page - 9, MSG, 5, 0, "implicit: SEND into it");
	munmap(mb + 12 * page, 4 * page);
	rdma(&p, IBV_WR_RDMA_WRITE, ma, ia->lkey, (uintptr_t)mb + 12 * page, ib->rkey,
	     IBV_WC_REM_ACCESS_ERR, "implicit: WRITE to an unmapped address");
	pair_close(&p);
	if (!pair_open(&p, &side_default, &side_default))
		goto out;
	rdma(&p, IBV_WR_RDMA_READ, ma, ia->lkey, (uintptr_t)mb + 12 * page, ib->rkey,
	     IBV_WC_REM_ACCESS_ERR, "implicit: READ of an unmapped address");
	pair_close(&p);
	if (!pair_open(&p, &side_default, &side_default))
		goto out;
	munmap(ma + 12 * page, 4 * page);
	rdma(&p, IBV_WR_RDMA_WRITE, ma + 12 * page, ia->lkey, (uintptr_t)mb, ib->rkey,
	     IBV_WC_LOC_PROT_ERR, "implicit: WRITE from an unmapped local SGE");
close:
	pair_close(&p);
out:
	if (ma)
		munmap(ma, 16 * page);
	if (mb)
		munmap(mb, 16 * page);
	if (ia)
		ibv_dereg_mr(ia);
	if (ib)
		ibv_dereg_mr(ib);
}

static int advise(struct ibv_pd *pd, enum ibv_advise_mr_advice advice, uint32_t flags, void *addr,
		  size_t len, uint32_t lkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)addr, .length = (uint32_t)len, .lkey = lkey };

	return ibv_advise_mr(pd, advice, flags, &sge, 1);
}

static void advise_mr(void)
{
	uint8_t *region = map_anon(NULL, 64 * page, MAP_NORESERVE);
	struct ibv_pd *other = ibv_alloc_pd(dev_b.ctx);
	struct ibv_mr *mr = NULL, *ro = NULL, *implicit = NULL;
	struct buf *plain = buf_new(&dev_b, page, page, IBV_ACCESS_LOCAL_WRITE, 0);
	struct ibv_sge many[20];
	int ret;

	if (!region || !other || !plain) {
		check(false, "advise_mr set-up: %s", strerror(errno));
		goto out;
	}
	mr = ibv_reg_mr(dev_b.pd, region, 32 * page, ODP_RW);
	ro = ibv_reg_mr(dev_b.pd, region + 32 * page, 32 * page,
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_ON_DEMAND);
	implicit = ibv_reg_mr(dev_b.pd, NULL, SIZE_MAX, ODP_RW);
	if (!mr || !ro || !implicit) {
		check(false, "ODP MRs for advise_mr: %s", strerror(errno));
		goto out;
	}
	ret = advise(dev_b.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, plain->p, page, plain->mr->lkey);
	check(ret == ENOENT, "advise on a plain MR: ENOENT, as mlx5 (%s)", strerror(ret));
	ret = advise(dev_b.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, region, page, mr->lkey ^ 0x80);
	check(ret == ENOENT, "advise with an unknown lkey: ENOENT (%s)", strerror(ret));
	ret = advise(other, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, region, page, mr->lkey);
	check(ret == EPERM, "advise through another PD: EPERM (%s)", strerror(ret));
	ret = advise(dev_b.pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, 0, region + 32 * page, page, ro->lkey);
	check(ret == EPERM, "PREFETCH_WRITE on a read-only MR: EPERM (%s)", strerror(ret));
	ret = advise(dev_b.pd, (enum ibv_advise_mr_advice)7, 0, region, page, mr->lkey);
	check(ret == EOPNOTSUPP, "an unknown advice: EOPNOTSUPP (%s)", strerror(ret));
	ret = advise(dev_b.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 2, region, page, mr->lkey);
	check(ret == EINVAL, "an unknown flag: EINVAL (%s)", strerror(ret));
	ret = ibv_advise_mr(dev_b.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, many, 0);
	check(ret == EINVAL, "an empty list: EINVAL (%s)", strerror(ret));
	ret = advise(dev_b.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, IBV_ADVISE_MR_FLAG_FLUSH,
		     region + 31 * page, 2 * page, mr->lkey);
	check(ret == EFAULT, "FLUSH past the MR's end: EFAULT (%s)", strerror(ret));
	ret = advise(dev_b.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, region + 31 * page, 2 * page, mr->lkey);
	check(ret == 0, "past the MR's end without FLUSH: 0, as the deferred prefetch (%s)",
	      strerror(ret));

	check(!resident(region, 4 * page), "untouched pages are not resident before");
	ret = advise(dev_b.pd, IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT, IBV_ADVISE_MR_FLAG_FLUSH,
		     region, 4 * page, mr->lkey);
	check(ret == 0 && !resident(region, 4 * page),
	      "PREFETCH_NO_FAULT faults nothing in (%s)", strerror(ret));
	ret = advise(dev_b.pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, IBV_ADVISE_MR_FLAG_FLUSH,
		     region, 4 * page, mr->lkey);
	check(ret == 0 && resident(region, 4 * page),
	      "PREFETCH_WRITE with FLUSH makes the pages resident (%s)", strerror(ret));
	check(all_bytes(region, 4 * page, 0), "and leaves their contents alone");
	for (unsigned int i = 0; i < 20; i++)
		many[i] = (struct ibv_sge){ .addr = (uintptr_t)region + (8 + i) * page, .length = 1,
					    .lkey = mr->lkey };
	ret = ibv_advise_mr(dev_b.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, IBV_ADVISE_MR_FLAG_FLUSH, many, 20);
	check(ret == 0 && resident(region + 8 * page, 20 * page),
	      "a list of 20 SGEs prefetches every one (%s)", strerror(ret));
	munmap(region + 40 * page, page);
	ret = advise(dev_b.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, IBV_ADVISE_MR_FLAG_FLUSH,
		     region + 40 * page, page, implicit->lkey);
	check(ret == EFAULT, "FLUSH of an unmapped address through the implicit MR: EFAULT (%s)",
	      strerror(ret));
	ret = advise(dev_b.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, IBV_ADVISE_MR_FLAG_FLUSH,
		     region + 41 * page, page, implicit->lkey);
	check(ret == 0 && resident(region + 41 * page, page),
	      "FLUSH through the implicit MR faults a mapped page in (%s)", strerror(ret));
out:
	if (implicit)
		ibv_dereg_mr(implicit);
	if (ro)
		ibv_dereg_mr(ro);
	if (mr)
		ibv_dereg_mr(mr);
	bufs_free();
	if (other)
		ibv_dealloc_pd(other);
	if (region)
		munmap(region, 64 * page);
}

static const struct named_check checks[] = {
	{ "odp_caps", caps },
	{ "explicit ODP MR", explicit_mr },
	{ "implicit ODP MR", implicit_mr },
	{ "ibv_advise_mr", advise_mr },
};

int main(int argc, char **argv)
{
	page = (size_t)sysconf(_SC_PAGESIZE);
	return run_checks_main(argc, argv, checks, sizeof(checks) / sizeof(checks[0]));
}
