/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Lifetimes of MRs and memory windows, and reregistration, through the
 * public verbs API:
 * - an MR with a bound window (type 1 or 2) can be neither deregistered
 *   nor reregistered (EBUSY) until the window is unbound, invalidated or
 *   freed, and the window keeps working meanwhile;
 * - a window's rkey never reaches another MR: not even one registered
 *   after its MR was gone and given the very same key;
 * - after ibv_rereg_mr with a new address, a new PD or both, the MRs work
 *   as freshly registered ones: SENDs both ways, WRITE and READ, local
 *   SGEs and remote access, the old memory untouched; an MR invalidated
 *   before is valid again.
 *
 * The harness is verbs_pair.c: QP "a" the requester on device A, "b" the
 * responder on device B, a fresh pair per check.
 *
 *   mr_mw DEVICE_A DEVICE_B   one line per check, then "N passed" and
 *                             "N failed"; exit 0 when none failed
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <infiniband/verbs.h>
#include "tests/e2e/harness/verbs_pair.h"

#define RW (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)
#define MSG 1024		/* bytes of each message */
#define KEY_REUSE_TRIES 4096	/* registrations spent looking for a key again */

/* A WRITE of MSG bytes from local at offset 0 to raddr through rkey; true when it completes as want. */
static bool write_through(struct pair *p, struct buf *local, uint64_t raddr, uint32_t rkey,
			  enum ibv_wc_status want, const char *what)
{
	struct ibv_sge sge = sge_of(local, 0, MSG);
	struct ibv_send_wr wr = {
		.wr_id = 0x51, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED, .wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	};

	return post_send(p->a.qp, &wr, what) &&
	       expect_wc(p->a.send_cq, what, (struct want){ 0x51, want, -1, -1 }, NULL);
}

/* LOCAL_INV of key through s's QP, completing successfully. */
static bool local_inv(struct side *s, uint32_t key, const char *what)
{
	struct ibv_send_wr wr = { .wr_id = 0x52, .opcode = IBV_WR_LOCAL_INV,
				  .send_flags = IBV_SEND_SIGNALED, .invalidate_rkey = key };

	return post_send(s->qp, &wr, what) &&
	       expect_wc(s->send_cq, what, (struct want){ 0x52, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV, -1 }, NULL);
}

/* Unbind mw through s's QP: a zero-length bind for type 1, LOCAL_INV for type 2. */
static bool unbind_window(struct side *s, struct ibv_mw *mw, struct ibv_mr *mr, const char *what)
{
	struct ibv_mw_bind_info none = { .mr = mr };

	return mw->type == IBV_MW_TYPE_1 ? bind_window(s, mw, &none, 0x53, what)
					 : local_inv(s, mw->rkey, what);
}

/* Window mw over the whole of remote's MR with REMOTE_WRITE, bound through b's QP. */
static bool bind_whole(struct pair *p, struct ibv_mw *mw, struct buf *remote, const char *what)
{
	struct ibv_mw_bind_info info = { .mr = remote->mr, .addr = raddr_of(remote, 0), .length = remote->len,
					 .mw_access_flags = IBV_ACCESS_REMOTE_WRITE };

	return bind_window(&p->b, mw, &info, 0x50, what);
}

/*
 * While a window is bound to an MR, ibv_dereg_mr and ibv_rereg_mr fail with
 * EBUSY and the window still works; once it is unbound (or freed, with
 * dealloc), the MR goes and the window's rkey reaches nothing.
 */
static void busy_case(enum ibv_mw_type type, bool dealloc)
{
	struct buf *local, *remote;
	struct ibv_mw *mw = NULL;
	struct pair p;
	char what[64];
	int ret;

	snprintf(what, sizeof(what), "MR under a bound type %d window%s", type == IBV_MW_TYPE_1 ? 1 : 2,
		 dealloc ? ", window freed" : "");
	if (!pair_open(&p, &side_default, &side_default))
		goto out;
	remote = buf_new(&dev_b, 4096, 4096, RW | IBV_ACCESS_MW_BIND, UNTOUCHED);
	local = buf_new(&dev_a, 4096, 4096, IBV_ACCESS_LOCAL_WRITE, 1);
	mw = ibv_alloc_mw(dev_b.pd, type);
	if (!remote || !local || !mw) {
		check(false, "%s: buffers and ibv_alloc_mw: %s", what, strerror(errno));
		goto out;
	}
	if (!bind_whole(&p, mw, remote, what))
		goto out;
	ret = ibv_dereg_mr(remote->mr);
	check(ret == EBUSY, "%s: ibv_dereg_mr fails with EBUSY (got %s)", what, strerror(ret));
	if (ret == 0)
		remote->mr = NULL;	/* gone after all: nothing more to look at */
	if (!remote->mr)
		goto out;
	errno = 0;
	ret = ibv_rereg_mr(remote->mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, RW);
	check(ret == IBV_REREG_MR_ERR_CMD && errno == EBUSY,
	      "%s: ibv_rereg_mr fails with EBUSY (got %d, %s)", what, ret, strerror(errno));
	if (write_through(&p, local, raddr_of(remote, 0), mw->rkey, IBV_WC_SUCCESS, what))
		check(all_bytes(remote->p, MSG, 1), "%s: the window still works", what);
	if (dealloc) {
		check(ibv_dealloc_mw(mw) == 0, "%s: ibv_dealloc_mw", what);
		mw = NULL;
	} else if (!unbind_window(&p.b, mw, remote->mr, what)) {
		goto out;
	}
	ret = ibv_dereg_mr(remote->mr);
	check(ret == 0, "%s: ibv_dereg_mr once unbound: %s", what, strerror(ret));
	if (ret == 0)
		remote->mr = NULL;
	if (mw)
		write_through(&p, local, raddr_of(remote, MSG), mw->rkey, IBV_WC_REM_ACCESS_ERR,
			      "the window's rkey after its MR is gone");
out:
	if (mw)
		check(ibv_dealloc_mw(mw) == 0, "%s: ibv_dealloc_mw", what);
	pair_close(&p);
	bufs_free();
}

/*
 * Register an MR over victim at iova until it gets key, which keeps it.
 * Keys are index << 8 | an 8-bit variant, as mlx5 mkeys: each
 * registration takes the next free index (next-fit, wrapping) and the
 * next variant, each window allocation the next variant. Steered: at each
 * pass over key's index, windows are allocated so that the next pass
 * arrives with key's variant. NULL when key's index stays taken for two
 * whole laps.
 */
static struct ibv_mr *register_with_key(struct buf *victim, uint64_t iova, uint32_t key)
{
	uint32_t index, prev = 0;
	long n, laps = 0, last_hit = -1;

	for (n = 0; n < KEY_REUSE_TRIES; n++) {
		struct ibv_mr *mr = ibv_reg_mr_iova(dev_b.pd, victim->p, victim->len, iova,
						    IBV_ACCESS_LOCAL_WRITE);
		uint32_t got;

		if (!mr)
			return NULL;
		got = mr->lkey;
		if (got == key)
			return mr;
		ibv_dereg_mr(mr);
		index = got >> 8;
		laps += index < prev;
		prev = index;
		if (index != key >> 8) {
			if (laps >= 2 && last_hit < 0)
				return NULL;
			continue;
		}
		if (last_hit >= 0) {
			/* The next pass takes n - last_hit registrations: start it that far before key. */
			uint8_t burn = (uint8_t)(key - got - (uint32_t)(n - last_hit));

			for (unsigned int i = 0; i < burn; i++) {
				struct ibv_mw *mw = ibv_alloc_mw(dev_b.pd, IBV_MW_TYPE_1);

				if (mw)
					ibv_dealloc_mw(mw);
			}
		}
		last_hit = n;
	}
	return NULL;
}

/*
 * A type 2 window stays bound to its MR: deregistering the MR fails, so
 * its key cannot come back on another MR (here one with LOCAL_WRITE only
 * at the same iova), and a WRITE through the window reaches the window's
 * MR or nothing, never the newcomer.
 */
static void check_key_reuse(void)
{
	const char *what = "window rkey after its MR's key is reused";
	struct buf *local, *remote, *victim;
	struct ibv_mr *newcomer = NULL;
	struct ibv_mw *mw = NULL;
	struct pair p;
	uint32_t key;
	int ret;

	if (!pair_open(&p, &side_default, &side_default))
		goto out;
	remote = buf_new(&dev_b, 4096, 4096, RW | IBV_ACCESS_MW_BIND, UNTOUCHED);
	victim = buf_new(&dev_b, 4096, 0, 0, UNTOUCHED);
	local = buf_new(&dev_a, 4096, 4096, IBV_ACCESS_LOCAL_WRITE, 1);
	mw = ibv_alloc_mw(dev_b.pd, IBV_MW_TYPE_2);
	if (!remote || !victim || !local || !mw) {
		check(false, "%s: buffers and ibv_alloc_mw: %s", what, strerror(errno));
		goto out;
	}
	if (!bind_whole(&p, mw, remote, what))
		goto out;
	key = remote->mr->lkey;
	ret = ibv_dereg_mr(remote->mr);
	check(ret == EBUSY, "%s: ibv_dereg_mr of the window's MR fails with EBUSY (got %s)", what,
	      strerror(ret));
	if (ret == 0)
		remote->mr = NULL;
	/* The newcomer at the same iova: the window's addresses fit it. */
	newcomer = register_with_key(victim, raddr_of(remote, 0), key);
	check(!newcomer, "%s: no MR registered since has key 0x%08x", what, key);
	write_through(&p, local, raddr_of(remote, 0), mw->rkey,
		      remote->mr ? IBV_WC_SUCCESS : IBV_WC_REM_ACCESS_ERR, what);
	check_untouched(victim->p, victim->len, UNTOUCHED, "the newcomer's memory");
	if (remote->mr)
		local_inv(&p.b, mw->rkey, what);
out:
	if (newcomer)
		ibv_dereg_mr(newcomer);
	if (mw)
		check(ibv_dealloc_mw(mw) == 0, "%s: ibv_dealloc_mw", what);
	pair_close(&p);
	bufs_free();
}

static void check_busy(void)
{
	busy_case(IBV_MW_TYPE_1, false);
	busy_case(IBV_MW_TYPE_2, false);
	busy_case(IBV_MW_TYPE_2, true);
}

/*
 * An MR of d over its final buffer, as flags will change it: first in
 * another PD (CHANGE_PD) and over stale (CHANGE_TRANSLATION); then
 * reregistered onto d's PD and buf. True when ibv_rereg_mr succeeds.
 */
static bool reregistered(struct dev *d, struct buf *buf, struct buf *stale, struct ibv_pd *other,
			 int flags, const char *what)
{
	struct buf *first = flags & IBV_REREG_MR_CHANGE_TRANSLATION ? stale : buf;
	int ret;

	buf->mr = ibv_reg_mr(flags & IBV_REREG_MR_CHANGE_PD ? other : d->pd, first->p, first->len, RW);
	if (!buf->mr) {
		check(false, "%s: ibv_reg_mr: %s", what, strerror(errno));
		return false;
	}
	if (!flags)
		return true;
	ret = ibv_rereg_mr(buf->mr, flags, d->pd, buf->p, buf->len, 0);
	check(ret == 0, "%s: ibv_rereg_mr on %s: %s", what, d->name, ret ? strerror(errno) : "ok");
	return ret == 0 && buf->mr->pd == d->pd && buf->mr->addr == buf->p;
}

/* SEND of MSG bytes at offset off of from's buffer into offset off of to's. */
static bool send_msg(struct side *from, struct buf *fbuf, struct side *to, struct buf *tbuf, size_t off,
		     const char *what)
{
	struct ibv_sge sge = sge_of(fbuf, off, MSG), in = sge_of(tbuf, off, MSG);
	struct ibv_recv_wr rwr = { .wr_id = 0x61, .sg_list = &in, .num_sge = 1 };
	struct ibv_send_wr wr = { .wr_id = 0x62, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED };

	return post_recv(to->qp, &rwr, what) && post_send(from->qp, &wr, what) &&
	       expect_wc(from->send_cq, what, (struct want){ 0x62, IBV_WC_SUCCESS, IBV_WC_SEND, -1 }, NULL) &&
	       expect_wc(to->recv_cq, what, (struct want){ 0x61, IBV_WC_SUCCESS, IBV_WC_RECV, MSG }, NULL);
}

/* WRITE or READ of MSG bytes between offset off of a's buffer and of b's. */
static bool rdma_msg(struct pair *p, struct buf *abuf, struct buf *bbuf, size_t off,
		     enum ibv_wr_opcode op, const char *what)
{
	struct ibv_sge sge = sge_of(abuf, off, MSG);
	struct ibv_send_wr wr = { .wr_id = 0x63, .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED,
				  .wr.rdma = { .remote_addr = raddr_of(bbuf, off), .rkey = bbuf->mr->rkey } };

	return post_send(p->a.qp, &wr, what) &&
	       expect_wc(p->a.send_cq, what, op == IBV_WR_RDMA_READ ?
			 (struct want){ 0x63, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, MSG } :
			 (struct want){ 0x63, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, -1 }, NULL);
}

/*
 * Both sides' MRs reregistered as flags says (0: freshly registered, the
 * baseline), then used as any MR: a SEND each way (local SGEs and receive
 * buffers), a WRITE and a READ through b's rkey. Message k lands at
 * offset k * MSG; the memory an MR left stays as it was.
 */
static void rereg_case(int flags, const char *what)
{
	struct buf *abuf, *bbuf, *astale, *bstale;
	struct ibv_pd *other_a, *other_b;
	struct pair p;

	other_a = ibv_alloc_pd(dev_a.ctx);
	other_b = ibv_alloc_pd(dev_b.ctx);
	if (!other_a || !other_b || !pair_open(&p, &side_default, &side_default))
		goto out;
	abuf = buf_new(&dev_a, 4 * MSG, 0, 0, 0);
	astale = buf_new(&dev_a, 4 * MSG, 0, 0, UNTOUCHED);
	bbuf = buf_new(&dev_b, 4 * MSG, 0, 0, 0);
	bstale = buf_new(&dev_b, 4 * MSG, 0, 0, UNTOUCHED);
	if (!abuf || !astale || !bbuf || !bstale ||
	    !reregistered(&dev_a, abuf, astale, other_a, flags, what) ||
	    !reregistered(&dev_b, bbuf, bstale, other_b, flags, what))
		goto out;
	fill_pattern(abuf->p, MSG, 1, 0);
	fill_pattern(abuf->p + MSG, MSG, 2, 0);
	fill_pattern(bbuf->p + 2 * MSG, MSG, 3, 0);
	if (!send_msg(&p.a, abuf, &p.b, bbuf, 0, what) ||
	    !rdma_msg(&p, abuf, bbuf, MSG, IBV_WR_RDMA_WRITE, what) ||
	    !rdma_msg(&p, abuf, bbuf, 2 * MSG, IBV_WR_RDMA_READ, what))
		goto out;
	fill_pattern(bbuf->p + 3 * MSG, MSG, 4, 0);
	if (!send_msg(&p.b, bbuf, &p.a, abuf, 3 * MSG, what))
		goto out;
	check_pattern(bbuf->p, MSG, 1, 0, "SEND a -> b");
	check_pattern(bbuf->p + MSG, MSG, 2, 0, "WRITE a -> b");
	check_pattern(abuf->p + 2 * MSG, MSG, 3, 0, "READ a <- b");
	check_pattern(abuf->p + 3 * MSG, MSG, 4, 0, "SEND b -> a");
	check_untouched(astale->p, astale->len, UNTOUCHED, "memory a's MR left");
	check_untouched(bstale->p, bstale->len, UNTOUCHED, "memory b's MR left");
out:
	pair_close(&p);
	bufs_free();
	if (other_a)
		ibv_dealloc_pd(other_a);
	if (other_b)
		ibv_dealloc_pd(other_b);
}

static void check_rereg(void)
{
	printf("= a fresh MR\n");
	rereg_case(0, "fresh MR");
	printf("= new address\n");
	rereg_case(IBV_REREG_MR_CHANGE_TRANSLATION, "rereg with a new address");
	printf("= new PD\n");
	rereg_case(IBV_REREG_MR_CHANGE_PD, "rereg with a new PD");
	printf("= new address and PD\n");
	rereg_case(IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_PD, "rereg with a new address and PD");
}

/* An MR whose key was invalidated is valid again after ibv_rereg_mr, as a new registration is. */
static void check_rereg_invalidated(void)
{
	const char *what = "rereg of an invalidated MR";
	struct buf *local, *remote, *moved;
	struct pair p;
	int ret;

	if (!pair_open(&p, &side_default, &side_default))
		goto out;
	remote = buf_new(&dev_b, 4096, 4096, RW, UNTOUCHED);
	moved = buf_new(&dev_b, 4096, 0, 0, UNTOUCHED);
	local = buf_new(&dev_a, 4096, 4096, IBV_ACCESS_LOCAL_WRITE, 1);
	if (!remote || !moved || !local || !local_inv(&p.b, remote->mr->rkey, what))
		goto out;
	ret = ibv_rereg_mr(remote->mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, moved->p, moved->len, 0);
	check(ret == 0, "%s: ibv_rereg_mr: %s", what, ret ? strerror(errno) : "ok");
	if (ret == 0 && write_through(&p, local, raddr_of(moved, 0), remote->mr->rkey, IBV_WC_SUCCESS, what))
		check(all_bytes(moved->p, MSG, 1) && all_bytes(remote->p, remote->len, UNTOUCHED),
		      "%s: the WRITE landed in the new memory only", what);
out:
	pair_close(&p);
	bufs_free();
}

static const struct named_check checks[] = {
	{ "MR with a bound window", check_busy },
	{ "window key reuse", check_key_reuse },
	{ "rereg", check_rereg },
	{ "rereg of an invalidated MR", check_rereg_invalidated },
};

int main(int argc, char **argv)
{
	return run_checks_main(argc, argv, checks, sizeof(checks) / sizeof(checks[0]));
}
