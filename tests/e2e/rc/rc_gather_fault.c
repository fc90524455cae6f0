/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * A source the device cannot read in the middle of one post list: the
 * requester reads the payloads of several work requests at once, and a
 * failed read must still fail exactly the one WR whose memory is gone.
 *
 * Every check posts WRS small signaled work requests (RDMA WRITEs or
 * SENDs) in one ibv_post_send; the source of WR k lies in a registered
 * page that was unmapped after registration (the lkey check passes, the
 * read fails). The WRs before k are sent and their data arrive, WR k
 * completes IBV_WC_LOC_PROT_ERR, the rest are flushed and nothing of them
 * arrives. The requester fails the QP as it meets WR k, before any ACK of
 * the earlier ones can come back (one post list is one doorbell), so
 * those complete IBV_WC_WR_FLUSH_ERR too, in SQ order, as they always did.
 * WR 1 carries its data inline.
 *
 *   rc_gather_fault DEVICE_A DEVICE_B   one line per check, then "N passed"
 *                                       and "N failed"; exit 0 when none failed
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include "tests/e2e/harness/verbs_pair.h"

#define WRS 8
#define MSG 64

/* The source: page 0 readable, page 1 registered and then unmapped. */
struct source {
	uint8_t *p;
	size_t page;
	struct ibv_mr *mr;
};

static bool source_open(struct source *s)
{
	s->page = (size_t)sysconf(_SC_PAGESIZE);
	s->p = mmap(NULL, 2 * s->page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s->p == MAP_FAILED) {
		check(false, "mmap: %s", strerror(errno));
		return false;
	}
	for (int i = 0; i < WRS; i++)
		fill_pattern(s->p + i * MSG, MSG, 10 + i, 0);
	s->mr = ibv_reg_mr(dev_a.pd, s->p, 2 * s->page, IBV_ACCESS_LOCAL_WRITE);
	if (!s->mr) {
		check(false, "ibv_reg_mr: %s", strerror(errno));
		munmap(s->p, 2 * s->page);
		return false;
	}
	munmap(s->p + s->page, s->page);
	return true;
}

static void source_close(struct source *s)
{
	ibv_dereg_mr(s->mr);
	munmap(s->p, s->page);
}

/* WR i of the list: MSG bytes of pattern 10 + i, from the unmapped page when i == bad. */
static void wr_fill(struct ibv_send_wr *wr, struct ibv_sge *sge, const struct source *s, int i,
		    int bad, enum ibv_wr_opcode opcode)
{
	*sge = (struct ibv_sge){ .addr = (uintptr_t)(s->p + (i == bad ? s->page : 0) + i * MSG),
				 .length = MSG, .lkey = s->mr->lkey };
	*wr = (struct ibv_send_wr){ .wr_id = 0x100 + i, .sg_list = sge, .num_sge = 1,
				    .opcode = opcode, .send_flags = IBV_SEND_SIGNALED,
				    .next = i + 1 < WRS ? wr + 1 : NULL };
	if (i == 1 && i != bad)
		wr->send_flags |= IBV_SEND_INLINE;
}

/* The send completions of the list, in order: LOC_PROT_ERR for bad, flushed around it. */
static void expect_list_wcs(struct pair *p, int bad, const char *what)
{
	for (int i = 0; i < WRS; i++) {
		enum ibv_wc_status st = i == bad ? IBV_WC_LOC_PROT_ERR : IBV_WC_WR_FLUSH_ERR;

		if (!expect_wc(p->a.send_cq, what, (struct want){ 0x100 + i, st, -1, -1 }, NULL))
			return;
	}
}

/*
 * The WRITE data of a WR before the failing one: flushed, it was sent yet
 * nothing says when it lands, so wait for it (30 s: a hang guard).
 */
static void wait_pattern(const uint8_t *p, unsigned int seed, const char *what)
{
	struct timespec since, tick = { 0, 1000000 };

	clock_gettime(CLOCK_MONOTONIC, &since);
	while (pattern_mismatch(p, MSG, seed, 0) != MSG && elapsed_ms(&since) < 30000)
		nanosleep(&tick, NULL);
	check_pattern(p, MSG, seed, 0, what);
}

/* Receives for the SENDs, one per message slot of in. */
static bool post_receives(struct pair *p, struct buf *in, const char *what)
{
	struct ibv_recv_wr rwr[WRS], *bad_rwr;
	struct ibv_sge rsge[WRS];

	for (int i = 0; i < WRS; i++) {
		rsge[i] = sge_of(in, i * MSG, MSG);
		rwr[i] = (struct ibv_recv_wr){ .wr_id = 0x200 + i, .sg_list = &rsge[i], .num_sge = 1,
					       .next = i + 1 < WRS ? &rwr[i + 1] : NULL };
	}
	if (ibv_post_recv(p->b.qp, rwr, &bad_rwr)) {
		check(false, "%s: ibv_post_recv", what);
		return false;
	}
	return true;
}

/* WRS WRITEs or SENDs into in's message slots in one post list, WR bad unreadable. */
static void post_list(enum ibv_wr_opcode opcode, int bad)
{
	bool send = opcode == IBV_WR_SEND;
	struct ibv_send_wr wr[WRS], *bad_wr;
	struct ibv_sge sge[WRS];
	struct ibv_wc wc;
	struct source s;
	struct pair p;
	struct buf *in;
	char what[64];

	snprintf(what, sizeof(what), "%s list, WR %d unreadable", send ? "SEND" : "WRITE", bad);
	if (!source_open(&s))
		return;
	in = buf_new(&dev_b, WRS * MSG, WRS * MSG, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
		     UNTOUCHED);
	if (in && pair_open(&p, &side_default, &side_default)) {
		for (int i = 0; i < WRS; i++) {
			wr_fill(&wr[i], &sge[i], &s, i, bad, opcode);
			wr[i].wr.rdma.remote_addr = send ? 0 : raddr_of(in, i * MSG);
			wr[i].wr.rdma.rkey = send ? 0 : in->mr->rkey;
		}
		check((!send || post_receives(&p, in, what)) && !ibv_post_send(p.a.qp, wr, &bad_wr),
		      "%s: posted as one list", what);
		expect_list_wcs(&p, bad, what);
		for (int i = 0; i < bad; i++) {
			if (!send)
				wait_pattern(in->p + i * MSG, 10 + i, what);
			else if (expect_wc(p.b.recv_cq, what, (struct want){ 0x200 + i, IBV_WC_SUCCESS,
									    IBV_WC_RECV, MSG }, NULL))
				check_pattern(in->p + i * MSG, MSG, 10 + i, 0, what);
		}
		/* Anything sent after WR bad would have come in order behind the last of them. */
		if (send)
			check(poll_wc(p.b.recv_cq, &wc, 200) == 0, "%s: nothing received past WR %d",
			      what, bad - 1);
		check_untouched(in->p + bad * MSG, (WRS - bad) * MSG, UNTOUCHED, what);
		expect_state(p.a.qp, IBV_QPS_ERR, what);
		pair_close(&p);
	}
	bufs_free();
	source_close(&s);
}

static void check_write_first(void) { post_list(IBV_WR_RDMA_WRITE, 0); }
static void check_write_middle(void) { post_list(IBV_WR_RDMA_WRITE, 3); }
static void check_write_last(void) { post_list(IBV_WR_RDMA_WRITE, WRS - 1); }
static void check_send_first(void) { post_list(IBV_WR_SEND, 0); }
static void check_send_middle(void) { post_list(IBV_WR_SEND, 5); }

static const struct named_check checks[] = {
	{ "WRITE list, first unreadable", check_write_first },
	{ "WRITE list, one in the middle unreadable", check_write_middle },
	{ "WRITE list, last unreadable", check_write_last },
	{ "SEND list, first unreadable", check_send_first },
	{ "SEND list, one in the middle unreadable", check_send_middle },
};

int main(int argc, char **argv)
{
	return run_checks_main(argc, argv, checks, sizeof(checks) / sizeof(checks[0]));
}
