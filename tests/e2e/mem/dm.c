/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Device memory through the public verbs API: max_dm_size as a ConnectX-5
 * reports it, ibv_alloc_dm's errnos (EINVAL for length 0, over
 * max_dm_size, an unknown comp_mask or an alignment the device cannot
 * give; ENOMEM once the device's memory is taken), ibv_memcpy_to_dm and
 * ibv_memcpy_from_dm at offsets and their errnos as mlx5 (EFAULT out of
 * bounds, EINVAL unaligned), ibv_reg_dm_mr's (zero based required, MEMIC
 * access only, the range inside the DM), ibv_free_dm EBUSY while an MR
 * uses it, and data moved by RDMA WRITE, READ and atomics between host
 * MRs and DM MRs of two devices, a DM MR also as a local SGE. Forked
 * children allocate device memory at once on the context they inherited
 * (as pyverbs' test_multi_process_alloc_dm): each succeeds, the regions
 * live in the parent's context after the children exit and count against
 * max_dm_size (ENOMEM), and the parent imports and frees them.
 *
 *   dm DEVICE_A DEVICE_B   one line per check, then "N passed" and "N failed"
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include "tests/e2e/harness/verbs_pair.h"

#define DM_MAX (128 * 1024)	/* a ConnectX-5's MEMIC */
#define DM_LEN 4096
#define DM_CHILDREN 4
#define RWA (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
	     IBV_ACCESS_REMOTE_ATOMIC)

static struct ibv_dm *dm_alloc(struct ibv_context *ctx, uint64_t length, uint32_t log_align)
{
	struct ibv_alloc_dm_attr attr = { .length = length, .log_align_req = log_align };

	return ibv_alloc_dm(ctx, &attr);
}

static void expect_alloc_fails(struct ibv_alloc_dm_attr attr, int want, const char *what)
{
	struct ibv_dm *dm = ibv_alloc_dm(dev_a.ctx, &attr);

	check(!dm && errno == want, "alloc_dm %s -> %s (got %s)", what, strerror(want),
	      dm ? "a DM" : strerror(errno));
	if (dm)
		ibv_free_dm(dm);
}

static void check_alloc(void)
{
	struct ibv_device_attr_ex attr;
	struct ibv_dm *dms[DM_MAX / DM_LEN + 1];
	unsigned int n;
	int rc;

	rc = ibv_query_device_ex(dev_a.ctx, NULL, &attr);
	check(rc == 0 && attr.max_dm_size == DM_MAX, "query_device_ex: max_dm_size %" PRIu64,
	      rc ? 0 : attr.max_dm_size);
	expect_alloc_fails((struct ibv_alloc_dm_attr){ .length = 0 }, EINVAL, "of 0 bytes");
	expect_alloc_fails((struct ibv_alloc_dm_attr){ .length = DM_MAX + 1 }, EINVAL,
			   "over max_dm_size");
	expect_alloc_fails((struct ibv_alloc_dm_attr){ .length = 64, .comp_mask = 1 }, EINVAL,
			   "with an unknown comp_mask");
	expect_alloc_fails((struct ibv_alloc_dm_attr){ .length = 64, .log_align_req = 20 }, EINVAL,
			   "aligned to 1 MiB");
	/* The device's memory, a page per region, then no more. */
	for (n = 0; n < DM_MAX / DM_LEN; n++) {
		dms[n] = dm_alloc(dev_a.ctx, n ? DM_LEN : 100, 6);
		if (!dms[n])
			break;
	}
	check(n == DM_MAX / DM_LEN, "alloc_dm: %u regions of a page fill max_dm_size (%s)", n,
	      n == DM_MAX / DM_LEN ? "ok" : strerror(errno));
	if (n == DM_MAX / DM_LEN) {
		dms[n] = dm_alloc(dev_a.ctx, 64, 0);
		check(!dms[n] && errno == ENOMEM, "alloc_dm past the device's memory -> ENOMEM (got %s)",
		      dms[n] ? "a DM" : strerror(errno));
		if (dms[n])
			n++;
	}
	check(n == 0 || (dms[0]->comp_mask & IBV_DM_MASK_HANDLE), "alloc_dm: handle reported");
	while (n--)
		check(ibv_free_dm(dms[n]) == 0, "free_dm %u", n);
}

static void check_copies(void)
{
	struct ibv_dm *dm = dm_alloc(dev_a.ctx, DM_LEN, 0);
	uint8_t out[256], in[256];
	int rc;

	check(dm != NULL, "alloc_dm of %d bytes: %s", DM_LEN, dm ? "ok" : strerror(errno));
	if (!dm)
		return;
	fill_pattern(out, sizeof(out), 1, 0);
	check(ibv_memcpy_to_dm(dm, 8, out, sizeof(out)) == 0, "memcpy_to_dm at offset 8");
	fill_pattern(out, 16, 2, 0);
	check(ibv_memcpy_to_dm(dm, DM_LEN - 16, out, 16) == 0, "memcpy_to_dm of its last 16 bytes");
	memset(in, 0, sizeof(in));
	check(ibv_memcpy_from_dm(in, dm, 8, sizeof(in)) == 0, "memcpy_from_dm at offset 8");
	check_pattern(in, sizeof(in), 1, 0, "memcpy_from_dm at offset 8");
	check(ibv_memcpy_from_dm(in, dm, 72, 16) == 0, "memcpy_from_dm at offset 72");
	check_pattern(in, 16, 1, 64, "memcpy_from_dm inside what was written");
	check(ibv_memcpy_from_dm(in, dm, DM_LEN - 16, 16) == 0, "memcpy_from_dm of the last bytes");
	check_pattern(in, 16, 2, 0, "the last 16 bytes");
	rc = ibv_memcpy_to_dm(dm, DM_LEN - 4, out, 8);
	check(rc == EFAULT, "memcpy_to_dm past the end -> EFAULT (got %d)", rc);
	rc = ibv_memcpy_from_dm(in, dm, DM_LEN, 4);
	check(rc == EFAULT, "memcpy_from_dm at the end -> EFAULT (got %d)", rc);
	rc = ibv_memcpy_to_dm(dm, 2, out, 8);
	check(rc == EINVAL, "memcpy_to_dm at an unaligned offset -> EINVAL (got %d)", rc);
	rc = ibv_memcpy_from_dm(in, dm, 0, 6);
	check(rc == EINVAL, "memcpy_from_dm of 6 bytes -> EINVAL (got %d)", rc);
	check(ibv_free_dm(dm) == 0, "free_dm");
}

static void expect_reg_fails(struct ibv_dm *dm, uint64_t offset, size_t len, unsigned int access,
			     const char *what)
{
	struct ibv_mr *mr = ibv_reg_dm_mr(dev_a.pd, dm, offset, len, access);

	check(!mr && errno == EINVAL, "reg_dm_mr %s -> EINVAL (got %s)", what,
	      mr ? "an MR" : strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);
}

static void check_mr_rules(void)
{
	struct ibv_dm *dm = dm_alloc(dev_a.ctx, DM_LEN, 0);
	struct ibv_mr *mr;
	int rc;

	if (!dm) {
		check(false, "alloc_dm: %s", strerror(errno));
		return;
	}
	expect_reg_fails(dm, 0, DM_LEN, RWA, "not zero based");
	expect_reg_fails(dm, 0, DM_LEN, RWA | IBV_ACCESS_ZERO_BASED | IBV_ACCESS_MW_BIND,
			 "with MW_BIND");
	expect_reg_fails(dm, 64, DM_LEN, RWA | IBV_ACCESS_ZERO_BASED, "past its end");
	expect_reg_fails(dm, DM_LEN + 64, 64, RWA | IBV_ACCESS_ZERO_BASED, "at an offset past it");
	expect_reg_fails(dm, 0, DM_LEN, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_ZERO_BASED,
			 "remote write without local write");
	mr = ibv_reg_dm_mr(dev_a.pd, dm, 1024, 2048, RWA | IBV_ACCESS_ZERO_BASED);
	check(mr && !mr->addr && mr->length == 2048 && mr->lkey == mr->rkey,
	      "reg_dm_mr: zero based, length 2048, one key (%s)", mr ? "ok" : strerror(errno));
	rc = ibv_free_dm(dm);
	check(rc == EBUSY, "free_dm while an MR uses it -> EBUSY (got %d)", rc);
	if (mr)
		check(ibv_dereg_mr(mr) == 0, "dereg_mr of the DM MR");
	check(ibv_free_dm(dm) == 0, "free_dm once its MR is gone");
}

static bool rdma(struct side *s, enum ibv_wr_opcode op, struct ibv_sge sge, uint64_t raddr,
		 uint32_t rkey, uint64_t add, const char *what)
{
	struct ibv_send_wr wr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED };

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD)
		wr.wr.atomic = (typeof(wr.wr.atomic)){ .remote_addr = raddr, .rkey = rkey,
						       .compare_add = add };
	else
		wr.wr.rdma = (typeof(wr.wr.rdma)){ .remote_addr = raddr, .rkey = rkey };
	return post_send(s->qp, &wr, what) &&
	       expect_wc(s->send_cq, what, (struct want){ 7, IBV_WC_SUCCESS, -1, -1 }, NULL);
}

/* A's host MR and DM MR against B's DM MR, B's DM at offset 1024 registered zero based. */
static void check_rdma(void)
{
	struct ibv_dm *dm_b = dm_alloc(dev_b.ctx, DM_LEN, 0), *dm_a = dm_alloc(dev_a.ctx, DM_LEN, 0);
	struct ibv_mr *mr_b = NULL, *mr_a = NULL;
	struct buf *host = buf_new(&dev_a, 8192, 8192, RWA, UNTOUCHED);
	uint8_t in[512];
	uint64_t word = 40, orig;
	struct pair p = { 0 };

	if (!dm_a || !dm_b || !host || !pair_open(&p, &side_default, &side_default)) {
		check(false, "DMs, host buffer and QP pair: %s", strerror(errno));
		goto out;
	}
	mr_b = ibv_reg_dm_mr(dev_b.pd, dm_b, 1024, 2048, RWA | IBV_ACCESS_ZERO_BASED);
	mr_a = ibv_reg_dm_mr(dev_a.pd, dm_a, 0, DM_LEN, RWA | IBV_ACCESS_ZERO_BASED);
	if (!mr_a || !mr_b) {
		check(false, "reg_dm_mr: %s", strerror(errno));
		goto out;
	}
	fill_pattern(host->p, 512, 3, 0);
	if (rdma(&p.a, IBV_WR_RDMA_WRITE, sge_of(host, 0, 512), 256, mr_b->rkey, 0,
		 "WRITE host -> DM at 256")) {
		ibv_memcpy_from_dm(in, dm_b, 1024 + 256, 512);
		check_pattern(in, 512, 3, 0, "DM after a WRITE into it");
	}
	if (rdma(&p.a, IBV_WR_RDMA_READ, sge_of(host, 4096, 512), 256, mr_b->rkey, 0,
		 "READ DM at 256 -> host"))
		check_pattern(host->p + 4096, 512, 3, 0, "host after a READ of the DM");
	ibv_memcpy_to_dm(dm_b, 1024 + 8, &word, sizeof(word));
	if (rdma(&p.a, IBV_WR_ATOMIC_FETCH_AND_ADD, sge_of(host, 2048, 8), 8, mr_b->rkey, 2,
		 "fetch-and-add on the DM")) {
		ibv_memcpy_from_dm(&word, dm_b, 1024 + 8, sizeof(word));
		memcpy(&orig, host->p + 2048, sizeof(orig));
		check(orig == 40 && word == 42, "fetch-and-add: original %" PRIu64 ", DM now %" PRIu64,
		      orig, word);
	}
	/* A DM MR as the local SGE: B's DM gets A's DM bytes. */
	fill_pattern(in, 256, 4, 0);
	ibv_memcpy_to_dm(dm_a, 512, in, 256);
	if (rdma(&p.a, IBV_WR_RDMA_WRITE, (struct ibv_sge){ 512, 256, mr_a->lkey }, 1024,
		 mr_b->rkey, 0, "WRITE DM (local SGE) -> DM")) {
		memset(in, 0, sizeof(in));
		ibv_memcpy_from_dm(in, dm_b, 1024 + 1024, 256);
		check_pattern(in, 256, 4, 0, "B's DM after a WRITE from A's DM");
	}
	/* Outside the DM MR's 2048 bytes: a remote access error, nothing written. */
	{
		struct ibv_send_wr wr = { .wr_id = 8, .opcode = IBV_WR_RDMA_WRITE,
					  .send_flags = IBV_SEND_SIGNALED, .num_sge = 1 };
		struct ibv_sge sge = sge_of(host, 0, 64);

		wr.sg_list = &sge;
		wr.wr.rdma.remote_addr = 2048 - 32;
		wr.wr.rdma.rkey = mr_b->rkey;
		if (post_send(p.a.qp, &wr, "WRITE past the DM MR"))
			expect_wc(p.a.send_cq, "WRITE past the DM MR",
				  (struct want){ 8, IBV_WC_REM_ACCESS_ERR, -1, -1 }, NULL);
	}
out:
	pair_close(&p);
	if (mr_a)
		ibv_dereg_mr(mr_a);
	if (mr_b)
		ibv_dereg_mr(mr_b);
	if (dm_a)
		ibv_free_dm(dm_a);
	if (dm_b)
		ibv_free_dm(dm_b);
	bufs_free();
}

/* What a child allocated: 0 and the DM's handle, or the errno value. */
struct child_dm {
	int err;
	uint32_t handle;
};

/* A forked child: wait for the start, allocate on the inherited context, report, exit. */
static void __attribute__((noreturn)) child_alloc(const int go[2], const int report[2])
{
	struct child_dm got = { 0 };
	struct ibv_dm *dm;
	char c;

	alarm(30);
	close(go[1]);
	close(report[0]);
	if (read(go[0], &c, 1) < 0)
		_exit(1);
	dm = dm_alloc(dev_a.ctx, DM_MAX / DM_CHILDREN, 0);
	got.err = dm ? 0 : errno;
	got.handle = dm ? dm->handle : 0;
	_exit(write(report[1], &got, sizeof(got)) == (ssize_t)sizeof(got) ? 0 : 1);
}

static void check_fork_alloc(void)
{
	struct child_dm got[DM_CHILDREN];
	unsigned int n, started = 0, ok = 0;
	int go[2], report[2], status;
	struct ibv_dm *dm;
	pid_t pid;

	if (pipe(go) || pipe(report)) {
		check(false, "pipes: %s", strerror(errno));
		return;
	}
	for (n = 0; n < DM_CHILDREN; n++) {
		pid = fork();
		if (pid == 0)
			child_alloc(go, report);
		started += pid > 0;
	}
	close(go[0]);
	close(report[1]);
	close(go[1]);	/* every child starts now */
	for (n = 0; n < started; n++) {
		if (read(report[0], &got[n], sizeof(got[n])) != (ssize_t)sizeof(got[n]))
			break;
		ok += got[n].err == 0;
		if (got[n].err)
			printf("note: child %u: %s\n", n, strerror(got[n].err));
	}
	close(report[0]);
	while (wait(&status) > 0)
		;
	check(started == DM_CHILDREN && ok == DM_CHILDREN,
	      "alloc_dm in %u forked children at once: %u of %u succeeded", DM_CHILDREN, ok, started);
	if (ok != DM_CHILDREN)
		return;
	dm = dm_alloc(dev_a.ctx, 64, 0);
	check(!dm && errno == ENOMEM,
	      "alloc_dm with the children's regions holding max_dm_size -> ENOMEM (got %s)",
	      dm ? "a DM" : strerror(errno));
	if (dm)
		ibv_free_dm(dm);
	for (n = 0; n < DM_CHILDREN; n++) {
		dm = ibv_import_dm(dev_a.ctx, got[n].handle);
		check(dm && ibv_free_dm(dm) == 0, "import and free child %u's DM (handle %u)", n,
		      got[n].handle);
	}
	dm = dm_alloc(dev_a.ctx, DM_MAX, 0);
	check(dm != NULL, "alloc_dm of max_dm_size once they are freed (%s)",
	      dm ? "ok" : strerror(errno));
	if (dm)
		ibv_free_dm(dm);
}

static const struct named_check checks[] = {
	{ "alloc_dm limits and errnos", check_alloc },
	{ "alloc_dm in forked children", check_fork_alloc },
	{ "memcpy to and from device memory", check_copies },
	{ "reg_dm_mr rules, free_dm EBUSY", check_mr_rules },
	{ "RDMA between host and device memory", check_rdma },
};

int main(int argc, char **argv)
{
	return run_checks_main(argc, argv, checks, sizeof(checks) / sizeof(checks[0]));
}
