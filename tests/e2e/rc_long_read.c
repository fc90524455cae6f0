/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * A READ of 1 GiB does not hold the daemon. While one RC QP pair moves it
 * (the responder answers a burst per turn of its loop), `rocemu status`
 * answers within 1 s every time it is asked and a second QP pair between
 * the same devices keeps completing small WRITEs, each within 1 s; then
 * the READ completes with its data.
 *
 * The READ's source is 1 GiB of MAP_NORESERVE anonymous memory, untouched
 * but for a few pattern pages: an untouched page reads as zeros and costs
 * no memory. Its destination is 16 SGEs of 64 MiB: the first over a buffer
 * of its own, the other 15 over one shared buffer, which ends up holding
 * the READ's last 64 MiB; 128 MiB show the READ's first and last parts.
 *
 *   rc_long_read DEVICE_A DEVICE_B ROCEMU
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "forge.h"
#include "verbs_pair.h"

#define READ_BYTES (1ull << 30)
#define CHUNK_BYTES (64u << 20)		/* one destination SGE */
#define NCHUNKS ((unsigned int)(READ_BYTES / CHUNK_BYTES))
#define PAGE_BYTES 4096u
#define LAST_CHUNK (READ_BYTES - CHUNK_BYTES)
#define SEED 11
#define STATUS_MS 1000			/* `rocemu status` must answer within this */
#define SMALL_MS 1000			/* and each small WRITE complete within this */
#define SMALL_BYTES 64
#define SMALLS_PER_STATUS 8
#define READ_WAIT_MS 60000		/* the READ takes seconds; on a daemon it holds, far more */
#define READ_WR_ID 0x1eadu

/* Source pages written with the pattern: the READ's first and last ones and some in between. */
static const uint64_t pattern_pages[] = {
	0, CHUNK_BYTES / 2, LAST_CHUNK, LAST_CHUNK + CHUNK_BYTES / 2, READ_BYTES - PAGE_BYTES,
};

/* One small WRITE of round's pattern from s's a to its b, completed within SMALL_MS. */
static bool small_write(struct pair *s, struct buf *src, struct buf *dst, unsigned int round,
			long *slowest_ms)
{
	struct ibv_sge sge = sge_of(src, 0, SMALL_BYTES);
	struct ibv_send_wr wr = {
		.wr_id = round, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr_of(dst, 0), .rkey = dst->mr->rkey },
	};
	struct timespec start;
	struct ibv_wc wc;
	long took;
	int got;

	fill_pattern(src->p, SMALL_BYTES, round, 0);
	clock_gettime(CLOCK_MONOTONIC, &start);
	if (!post_send(s->a.qp, &wr, "small WRITE"))
		return false;
	got = poll_wc(s->a.send_cq, &wc, SMALL_MS);
	took = elapsed_ms(&start);
	if (got != 1 || wc.status != IBV_WC_SUCCESS || wc.wr_id != round) {
		check(false, "small WRITE %u during the READ: %s", round,
		      got == 1 ? ibv_wc_status_str(wc.status) : "no completion within 1 s");
		return false;
	}
	if (took > *slowest_ms)
		*slowest_ms = took;
	return true;
}

/* Page off of the READ, landed at p, is the pattern (or zeros where the source was untouched). */
static void check_page(const uint8_t *p, uint64_t off, bool pattern)
{
	char what[96];

	snprintf(what, sizeof(what), "READ data at %llu MiB + %llu", (unsigned long long)(off >> 20),
		 (unsigned long long)(off & ((1u << 20) - 1)));
	if (pattern)
		check_pattern(p, PAGE_BYTES, SEED, off, what);
	else
		check(all_bytes(p, PAGE_BYTES, 0), "%s: zeros", what);
}

static void check_long_read(void)
{
	struct side_spec big_spec = side_default, small_spec = side_default;
	struct ibv_sge sge[NCHUNKS];
	struct ibv_send_wr wr = {
		.wr_id = READ_WR_ID, .sg_list = sge, .num_sge = NCHUNKS, .opcode = IBV_WR_RDMA_READ,
		.send_flags = IBV_SEND_SIGNALED,
	};
	unsigned int statuses = 0, smalls = 0, i;
	struct buf *first, *shared, *src, *dst;
	struct ibv_mr *source_mr = NULL;
	struct pair big = { 0 }, small = { 0 };
	struct timespec start;
	long slowest_ms = 0;
	uint8_t *source;
	struct ibv_wc wc;
	int got = 0;

	source = mmap(NULL, READ_BYTES, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (source == MAP_FAILED) {
		check(false, "mmap of 1 GiB with MAP_NORESERVE");
		return;
	}
	big_spec.cap.max_send_sge = NCHUNKS;
	big_spec.knobs.path_mtu = IBV_MTU_4096;
	if (!pair_open(&big, &big_spec, &big_spec) || !pair_open(&small, &small_spec, &small_spec))
		goto out;
	check(big.a.cap.max_send_sge >= NCHUNKS, "the READ's QP takes %u SGEs (granted %u)", NCHUNKS,
	      big.a.cap.max_send_sge);
	for (i = 0; i < sizeof(pattern_pages) / sizeof(pattern_pages[0]); i++)
		fill_pattern(source + pattern_pages[i], PAGE_BYTES, SEED, pattern_pages[i]);
	source_mr = ibv_reg_mr(dev_b.pd, source, READ_BYTES, IBV_ACCESS_REMOTE_READ);
	first = buf_new(&dev_a, CHUNK_BYTES, CHUNK_BYTES, IBV_ACCESS_LOCAL_WRITE, UNTOUCHED);
	shared = buf_new(&dev_a, CHUNK_BYTES, CHUNK_BYTES, IBV_ACCESS_LOCAL_WRITE, UNTOUCHED);
	src = buf_new(&dev_a, SMALL_BYTES, SMALL_BYTES, IBV_ACCESS_LOCAL_WRITE, 0);
	dst = buf_new(&dev_b, SMALL_BYTES, SMALL_BYTES,
		      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, UNTOUCHED);
	if (!source_mr || !first || !shared || !src || !dst) {
		check(false, "registering the READ's and the WRITEs' memory");
		goto out;
	}
	sge[0] = sge_of(first, 0, CHUNK_BYTES);
	for (i = 1; i < NCHUNKS; i++)
		sge[i] = sge_of(shared, 0, CHUNK_BYTES);
	wr.wr.rdma.remote_addr = (uintptr_t)source;
	wr.wr.rdma.rkey = source_mr->rkey;

	clock_gettime(CLOCK_MONOTONIC, &start);
	if (!post_send(big.a.qp, &wr, "READ of 1 GiB"))
		goto out;
	/* Until the READ completes: the CLI and the other pair are served all along. */
	while (!(got = poll_wc(big.a.send_cq, &wc, 0))) {
		if (elapsed_ms(&start) > READ_WAIT_MS) {
			check(false, "the READ of 1 GiB completes within %d s", READ_WAIT_MS / 1000);
			goto out;
		}
		if (!cli_status_within(STATUS_MS, "during the READ"))
			goto out;
		statuses++;
		for (i = 0; i < SMALLS_PER_STATUS; i++, smalls++)
			if (!small_write(&small, src, dst, smalls, &slowest_ms))
				goto out;
	}
	check(got == 1 && wc.wr_id == READ_WR_ID && wc.status == IBV_WC_SUCCESS &&
	      wc.byte_len == READ_BYTES, "the READ of 1 GiB completes in %ld ms: %s, %u bytes",
	      elapsed_ms(&start), got == 1 ? ibv_wc_status_str(wc.status) : "poll failed",
	      got == 1 ? wc.byte_len : 0);
	check(statuses > 0 && smalls > 0,
	      "while the READ was under way, rocemu status answered %u times within %d ms and %u small WRITEs completed (slowest %ld ms)",
	      statuses, STATUS_MS, smalls, slowest_ms);
	check_pattern(dst->p, SMALL_BYTES, smalls - 1, 0, "the last small WRITE's data");
	for (i = 0; i < sizeof(pattern_pages) / sizeof(pattern_pages[0]); i++) {
		uint64_t off = pattern_pages[i];

		check_page(off < CHUNK_BYTES ? first->p + off : shared->p + (off - LAST_CHUNK), off,
			   true);
	}
	check_page(first->p + PAGE_BYTES, PAGE_BYTES, false);
	check_page(shared->p + PAGE_BYTES, LAST_CHUNK + PAGE_BYTES, false);
	expect_state(big.b.qp, IBV_QPS_RTS, "the responder after the READ");
	cli_status_within(STATUS_MS, "after the READ");
out:
	bufs_free();
	if (source_mr)
		ibv_dereg_mr(source_mr);
	pair_close(&small);
	pair_close(&big);
	munmap(source, READ_BYTES);
}

int main(int argc, char **argv)
{
	static const struct named_check checks[] = {
		{ "a READ of 1 GiB under way, the daemon serving everyone else", check_long_read },
	};

	if (argc != 4) {
		fprintf(stderr, "usage: %s DEVICE_A DEVICE_B ROCEMU\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	cli_use(argv[3]);
	return run_checks(argv[1], argv[2], checks, sizeof(checks) / sizeof(checks[0]));
}
