/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Soak test of RC reliability: many QP pairs between two devices carry a
 * deterministic mix of SEND with immediate, RDMA WRITE with immediate,
 * RDMA READ and (with -a) FETCH_AND_ADD while the daemon injects faults.
 * Every requester completion must come once and in posting order; every
 * receive once, in order (the immediate names the message), with its
 * bytes; every READ must bring the right bytes; every fetch-and-add must
 * return the exact running sum, and the counters end at the exact total.
 *
 *   soak [-a] [-q QPS] [-n MESSAGES] [-s MAX_BYTES] DEVICE_A DEVICE_B
 *
 * QP "a" (on DEVICE_A) is the requester, "b" the responder. Prints one
 * line of totals; exit 0 when every check passed, 1 otherwise.
 */
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>
#include "tests/e2e/harness/verbs_pair.h"

#define SQ_DEPTH 32
#define RQ_DEPTH 64		/* more than the SENDs and WRITEs one QP can have in flight */
#define SLOTS 64		/* buffer slots per QP and kind: more than SQ_DEPTH */
#define READ_SRC_BYTES 65536
#define STALL_MS 20000		/* no completion for this long: stuck */
#define READ_SOURCE UINT32_MAX	/* message number of the READ source pattern */

enum op { OP_SEND, OP_WRITE, OP_READ, OP_FADD };

/* Per QP pair: a's and b's regions inside their device's memory. */
struct soak_pair {
	struct ibv_qp *a, *b;
	uint8_t *a_src, *a_dst;		/* SLOTS * max: SEND/WRITE sources, READ/FADD results */
	uint8_t *b_recv, *b_write;	/* SLOTS * max: receive slots, WRITE targets */
	uint8_t *b_read;		/* READ_SRC_BYTES of pattern */
	uint64_t *b_counter;		/* fetch-and-add target */
	uint32_t posted, done;		/* requester: next message to post, to complete */
	uint32_t recv_next;		/* responder: next message that consumes a receive */
	uint32_t recv_posted;		/* receives posted */
	uint64_t fadd_sum;		/* sum of the adds completed */
};

/* A local ACK timeout of 4.096 us * 2^12, about 17 ms: a loss at a burst's tail is resent soon. */
static const struct qp_knobs soak_knobs = {
	.max_rd_atomic = 16, .max_dest_rd_atomic = 16, .min_rnr_timer = 1,
	.timeout = 12, .retry_cnt = 7, .rnr_retry = 7,
};

static struct ibv_cq *cq_a, *cq_b;	/* every QP of the device, send and receive */
static struct buf *mem_a, *mem_b;	/* one MR over the memory of every QP of the device */
static struct soak_pair *pairs;
static unsigned int nqps = 16, per_qp;
static uint32_t max_bytes = 4096;
static bool atomics;
static unsigned long failures;
static uint64_t counts[4];

static uint32_t mix(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352dU;
	x ^= x >> 15;
	x *= 0x846ca68bU;
	x ^= x >> 16;
	return x;
}

static enum op msg_op(unsigned int q, uint32_t i)
{
	return (enum op)(mix(q * 1000003u + i) % (atomics ? 4 : 3));
}

static uint32_t msg_len(unsigned int q, uint32_t i)
{
	uint32_t r = mix(q * 7919u + i * 31u + 1);

	/* Mostly small, some up to max_bytes, a few empty. */
	return r % 16 == 0 ? 0 : r % 4 == 0 ? r % max_bytes + 1 : r % 512 + 1;
}

static uint8_t pattern(unsigned int q, uint32_t i, size_t off)
{
	return (uint8_t)(mix(q * 131u + i) + off * 7 + (off >> 8));
}

static void fail(unsigned int q, uint32_t i, const char *what)
{
	if (failures++ < 20)
		printf("FAIL: qp %u message %u: %s\n", q, i, what);
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

/* d named name, with one CQ and one MR of mem_len bytes for all its QPs. */
static void soak_dev_open(struct dev *d, const char *name, size_t mem_len, struct ibv_cq **cq,
			  struct buf **mem)
{
	int cqe = (int)nqps * (SQ_DEPTH + RQ_DEPTH) + 16;

	if (!dev_open(d, name))
		exit(1);
	*cq = ibv_create_cq(d->ctx, cqe, NULL, NULL, 0);
	if (!*cq)
		die("ibv_create_cq");
	*mem = buf_new(d, mem_len, mem_len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		       IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC, 0);
	if (!*mem)
		exit(1);
}

static struct ibv_qp *soak_qp_create(struct dev *d, struct ibv_cq *cq)
{
	struct ibv_qp_cap cap = { .max_send_wr = SQ_DEPTH, .max_recv_wr = RQ_DEPTH, .max_send_sge = 1,
				  .max_recv_sge = 1 };
	struct ibv_qp *qp = qp_create(d, cq, cq, false, &cap);

	if (!qp)
		exit(1);
	return qp;
}

static void post_recv_slot(unsigned int q)
{
	struct soak_pair *p = &pairs[q];
	uint32_t slot = p->recv_posted % SLOTS;
	struct ibv_sge sge = { .addr = (uintptr_t)(p->b_recv + (size_t)slot * max_bytes),
			       .length = max_bytes, .lkey = mem_b->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = ((uint64_t)q << 32) | p->recv_posted,
				  .sg_list = &sge, .num_sge = 1 }, *bad;

	if (ibv_post_recv(p->b, &wr, &bad))
		die("ibv_post_recv");
	p->recv_posted++;
}

static void post_msg(unsigned int q)
{
	struct soak_pair *p = &pairs[q];
	uint32_t i = p->posted, len = msg_len(q, i), slot = i % SLOTS;
	enum op op = msg_op(q, i);
	uint8_t *src = p->a_src + (size_t)slot * max_bytes, *dst = p->a_dst + (size_t)slot * max_bytes;
	struct ibv_sge sge = { .addr = (uintptr_t)src, .length = len, .lkey = mem_a->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = len ? 1 : 0,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	uint32_t off;

	switch (op) {
	case OP_SEND:
	case OP_WRITE:
		for (off = 0; off < len; off++)
			src[off] = pattern(q, i, off);
		wr.opcode = op == OP_SEND ? IBV_WR_SEND_WITH_IMM : IBV_WR_RDMA_WRITE_WITH_IMM;
		wr.imm_data = htobe32(i);
		wr.wr.rdma.remote_addr = (uintptr_t)(p->b_write + (size_t)slot * max_bytes);
		wr.wr.rdma.rkey = mem_b->mr->rkey;
		break;
	case OP_READ:
		off = mix(i * 3u + q) % (READ_SRC_BYTES - len + 1);
		memset(dst, 0, len);
		sge.addr = (uintptr_t)dst;
		wr.opcode = IBV_WR_RDMA_READ;
		wr.wr.rdma.remote_addr = (uintptr_t)(p->b_read + off);
		wr.wr.rdma.rkey = mem_b->mr->rkey;
		break;
	case OP_FADD:
		memset(dst, 0xff, 8);
		sge.addr = (uintptr_t)dst;
		sge.length = 8;
		wr.num_sge = 1;
		wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
		wr.wr.atomic.remote_addr = (uintptr_t)(p->b_counter);
		wr.wr.atomic.rkey = mem_b->mr->rkey;
		wr.wr.atomic.compare_add = (uint64_t)i + 1;
		break;
	}
	if (ibv_post_send(p->a, &wr, &bad))
		die("ibv_post_send");
	p->posted++;
}

/* b holds bytes [at, at + len) of message i of pair q (READ source: i = READ_SOURCE). */
static bool bytes_are(const uint8_t *b, uint32_t len, unsigned int q, uint32_t i, uint32_t at)
{
	for (uint32_t off = 0; off < len; off++)
		if (b[off] != pattern(q, i, at + off))
			return false;
	return true;
}

/* The requester's completion of message wc->wr_id on pair q. */
static void requester_done(unsigned int q, const struct ibv_wc *wc)
{
	struct soak_pair *p = &pairs[q];
	uint32_t i = (uint32_t)wc->wr_id, len = msg_len(q, i);
	const uint8_t *dst = p->a_dst + (size_t)(i % SLOTS) * max_bytes;
	enum op op = msg_op(q, i);
	uint64_t orig;

	if (wc->status != IBV_WC_SUCCESS) {
		fail(q, i, ibv_wc_status_str(wc->status));
		return;
	}
	if (i != p->done)
		fail(q, i, "requester completion out of order or twice");
	p->done = i + 1;
	counts[op]++;
	if (op == OP_READ &&
	    !bytes_are(dst, len, q, READ_SOURCE, mix(i * 3u + q) % (READ_SRC_BYTES - len + 1)))
		fail(q, i, "READ brought wrong bytes");
	if (op == OP_FADD) {
		memcpy(&orig, dst, sizeof(orig));
		if (orig != p->fadd_sum)
			fail(q, i, "fetch-and-add returned a wrong original value");
		p->fadd_sum += (uint64_t)i + 1;
	}
}

/* The responder's receive of the message named by the immediate. */
static void responder_done(unsigned int q, const struct ibv_wc *wc)
{
	struct soak_pair *p = &pairs[q];
	uint32_t i = be32toh(wc->imm_data), seq = (uint32_t)wc->wr_id;
	const uint8_t *data;

	if (wc->status != IBV_WC_SUCCESS) {
		fail(q, seq, ibv_wc_status_str(wc->status));
		return;
	}
	while (p->recv_next < per_qp &&
	       msg_op(q, p->recv_next) != OP_SEND && msg_op(q, p->recv_next) != OP_WRITE)
		p->recv_next++;
	if (!(wc->wc_flags & IBV_WC_WITH_IMM) || i != p->recv_next) {
		fail(q, i, "receive out of order, twice or without its immediate");
		p->recv_next = i;
	}
	p->recv_next++;
	if (msg_op(q, i) == OP_SEND) {
		data = p->b_recv + (size_t)(seq % SLOTS) * max_bytes;
		if (wc->opcode != IBV_WC_RECV || wc->byte_len != msg_len(q, i) ||
		    !bytes_are(data, msg_len(q, i), q, i, 0))
			fail(q, i, "SEND arrived with wrong length or bytes");
	} else {
		data = p->b_write + (size_t)(i % SLOTS) * max_bytes;
		if (wc->opcode != IBV_WC_RECV_RDMA_WITH_IMM ||
		    !bytes_are(data, msg_len(q, i), q, i, 0))
			fail(q, i, "WRITE left wrong bytes");
	}
	post_recv_slot(q);
}

static int pair_of(uint32_t qpn, bool requester)
{
	for (unsigned int q = 0; q < nqps; q++)
		if ((requester ? pairs[q].a : pairs[q].b)->qp_num == qpn)
			return (int)q;
	return -1;
}

static void setup(const char *name_a, const char *name_b)
{
	size_t region = (size_t)SLOTS * max_bytes, a_len = nqps * 2 * region,
	       b_len = nqps * (2 * region + READ_SRC_BYTES + 4096);

	pairs = calloc(nqps, sizeof(*pairs));
	if (!pairs)
		die("calloc");
	soak_dev_open(&dev_a, name_a, a_len, &cq_a, &mem_a);
	soak_dev_open(&dev_b, name_b, b_len, &cq_b, &mem_b);
	for (unsigned int q = 0; q < nqps; q++) {
		struct soak_pair *p = &pairs[q];

		p->a_src = mem_a->p + q * 2 * region;
		p->a_dst = p->a_src + region;
		p->b_recv = mem_b->p + q * (2 * region + READ_SRC_BYTES + 4096);
		p->b_write = p->b_recv + region;
		p->b_read = p->b_write + region;
		p->b_counter = (uint64_t *)(p->b_read + READ_SRC_BYTES);
		for (size_t off = 0; off < READ_SRC_BYTES; off++)
			p->b_read[off] = pattern(q, READ_SOURCE, off);
		p->a = soak_qp_create(&dev_a, cq_a);
		p->b = soak_qp_create(&dev_b, cq_b);
		errno = qp_connect(p->a, p->b->qp_num, &dev_b.gid, PSN_A, PSN_B, &soak_knobs);
		if (!errno)
			errno = qp_connect(p->b, p->a->qp_num, &dev_a.gid, PSN_B, PSN_A, &soak_knobs);
		if (errno)
			die("connecting a QP pair");
		while (p->recv_posted < RQ_DEPTH)
			post_recv_slot(q);
	}
}

/* Poll both devices until every message completed, or until nothing moves for STALL_MS. */
static bool run(void)
{
	struct timespec last;
	struct ibv_wc wc[64];
	uint32_t finished = 0;
	int n, k, q;

	clock_gettime(CLOCK_MONOTONIC, &last);
	while (finished < nqps) {
		bool moved = false;

		/* The responder first: its CQEs precede the ACKs that free the slots. */
		while ((n = ibv_poll_cq(cq_b, 64, wc)) > 0) {
			for (k = 0; k < n; k++)
				if ((q = pair_of(wc[k].qp_num, false)) >= 0)
					responder_done((unsigned int)q, &wc[k]);
			moved = true;
		}
		while ((n = ibv_poll_cq(cq_a, 64, wc)) > 0) {
			for (k = 0; k < n; k++)
				if ((q = pair_of(wc[k].qp_num, true)) >= 0)
					requester_done((unsigned int)q, &wc[k]);
			moved = true;
		}
		if (n < 0 || failures)
			return false;
		finished = 0;
		for (q = 0; q < (int)nqps; q++) {
			struct soak_pair *p = &pairs[q];

			while (p->posted < per_qp && p->posted - p->done < SQ_DEPTH)
				post_msg((unsigned int)q);
			finished += p->done == per_qp;
		}
		if (moved)
			clock_gettime(CLOCK_MONOTONIC, &last);
		else if (elapsed_ms(&last) > STALL_MS)
			return false;
	}
	return true;
}

int main(int argc, char **argv)
{
	unsigned long total = 100000;
	bool ok;
	int c;

	while ((c = getopt(argc, argv, "aq:n:s:")) != -1) {
		switch (c) {
		case 'a':
			atomics = true;
			break;
		case 'q':
			nqps = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'n':
			total = strtoul(optarg, NULL, 0);
			break;
		case 's':
			max_bytes = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		default:
			return 2;
		}
	}
	if (argc - optind != 2 || !nqps || !total || max_bytes < 8 ||
	    max_bytes > READ_SRC_BYTES) {
		fprintf(stderr, "usage: soak [-a] [-q QPS] [-n MESSAGES] [-s MAX_BYTES] DEV_A DEV_B\n");
		return 2;
	}
	per_qp = (uint32_t)((total + nqps - 1) / nqps);
	setup(argv[optind], argv[optind + 1]);
	ok = run();
	for (unsigned int q = 0; q < nqps; q++) {
		struct soak_pair *p = &pairs[q];

		if (p->done != per_qp) {
			printf("FAIL: qp %u: %u of %u messages completed\n", q, p->done, per_qp);
			ok = false;
		}
		if (*p->b_counter != p->fadd_sum) {
			printf("FAIL: qp %u: counter %" PRIu64 ", want %" PRIu64 "\n", q,
			       *p->b_counter, p->fadd_sum);
			ok = false;
		}
	}
	printf("%u QPs, %u messages: %" PRIu64 " SEND, %" PRIu64 " WRITE, %" PRIu64 " READ, %"
	       PRIu64 " FETCH_AND_ADD; %lu failures\n", nqps, per_qp * nqps, counts[OP_SEND],
	       counts[OP_WRITE], counts[OP_READ], counts[OP_FADD], failures);
	return ok && !failures ? 0 : 1;
}
