/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * A program that scribbles over its own rings, as a buggy direct-verbs
 * program may: through mlx5dv_init_obj it gets the SQ, RQ, SRQ and CQ
 * buffers, their doorbell records and the BlueFlame register of two
 * connected RC QPs (one on an SRQ) and a UD QP, and writes them at random,
 * seeded: ctrl segments of any opcode, size and QPN, random words, good
 * WQEs now and then (SEND, WRITE, READ, UD SENDs to itself, receives),
 * doorbell records near the producer or anywhere, CQ consumer indices and
 * arm words; completion and async events are drained; a QP found in ERR
 * is taken through RESET back to RTS now and then. Each round ends as
 * issue 20 told: two-BB WQEs of garbage and an odd doorbell on every send
 * queue; each QP must then be in ERR (ibv_query_qp, within 10 s). Rounds
 * make and destroy everything anew. Nothing the program does may hang the
 * daemon: its test runs other clients beside it.
 *
 *   ring_scribble DEVICE SEED SCRIBBLES
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/mlx5dv.h>

#include "tests/e2e/harness/verbs_pair.h"

#define ROUNDS 10
#define PACE_EVERY 8			/* scribbles between pauses: the daemon sees them */
#define PACE_US 100
#define REVIVE_EVERY 256		/* scribbles between looks for QPs in ERR to reset */
#define BUF_LEN 65536
#define QKEY 0x11111111u
#define ERR_WAIT_MS 10000
#define ERR_REDOORBELL_MS 100		/* a doorbell the daemon had already: ring again */
#define GARBAGE_DS 5			/* two BBs */
#define DATAGRAM_DS (sizeof(struct mlx5_wqe_datagram_seg) / 16)

struct dv_qp {
	const char *name;
	struct ibv_qp *qp;
	struct mlx5dv_qp dv;
	uint32_t sq_pi, rq_pi;		/* where the program's own posts go */
	uint32_t bf_half;
};

struct world {
	struct ibv_comp_channel *channel;
	struct ibv_cq *cq[2];
	struct mlx5dv_cq dvcq[2];
	struct ibv_srq *srq;
	struct mlx5dv_srq dvsrq;
	uint32_t srq_cnt, srq_pi;
	struct ibv_ah *ah;
	struct mlx5dv_ah dvah;
	struct dv_qp qp[3];		/* RC with an RQ, RC on the SRQ, UD */
};

enum { RC_RQ, RC_SRQ, UD };

static const struct qp_knobs knobs = { .max_rd_atomic = 4, .max_dest_rd_atomic = 4,
				       .min_rnr_timer = 1, .timeout = 8, .retry_cnt = 3,
				       .rnr_retry = 3 };
static struct dev dev;
static struct buf *buf;
static uint64_t rng;
static unsigned long events[IBV_EVENT_WQ_FATAL + 1], cq_events, revived, failed_again,
	not_revived;

/* xorshift64*: the same scribbles for the same seed. */
static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dull;
}

static uint32_t below(uint32_t n)
{
	return (uint32_t)(rnd() % n);
}

static void *sq_bb(struct dv_qp *q, uint32_t bb)
{
	return (uint8_t *)q->dv.sq.buf + (size_t)(bb & (q->dv.sq.wqe_cnt - 1)) * q->dv.sq.stride;
}

static void store_be32(__be32 *p, uint32_t v)
{
	__atomic_store_n(p, htobe32(v), __ATOMIC_RELEASE);
}

/* A random word at a random 8-byte offset of [base, base + len). */
static void scribble_word(void *base, size_t len)
{
	uint64_t v = rnd();

	if (len >= sizeof(v))
		memcpy((uint8_t *)base + (below((uint32_t)(len / sizeof(v))) * sizeof(v)), &v,
		       sizeof(v));
}

/* A ctrl segment of any opcode, size, flags and index; mostly the QP's own QPN. */
static void scribble_ctrl(struct dv_qp *q)
{
	static const uint8_t opcodes[] = {
		MLX5_OPCODE_NOP, MLX5_OPCODE_SEND_INVAL, MLX5_OPCODE_RDMA_WRITE,
		MLX5_OPCODE_RDMA_WRITE_IMM, MLX5_OPCODE_SEND, MLX5_OPCODE_SEND_IMM,
		MLX5_OPCODE_TSO, MLX5_OPCODE_RDMA_READ, MLX5_OPCODE_ATOMIC_CS,
		MLX5_OPCODE_ATOMIC_FA, MLX5_OPCODE_LOCAL_INVAL, MLX5_OPCODE_UMR, 0xff,
	};

	mlx5dv_set_ctrl_seg(sq_bb(q, below(q->dv.sq.wqe_cnt)), (uint16_t)rnd(),
			    opcodes[below(sizeof(opcodes))], 0,
			    below(4) ? q->qp->qp_num : (uint32_t)rnd() & 0xffffff,
			    (uint8_t)rnd(), (uint8_t)below(64), 0, (__be32)rnd());
}

/* A good one-BB RC WQE at the program's producer: SEND, WRITE or READ within the buffer. */
static void post_rc_send(struct dv_qp *q)
{
	static const uint8_t opcodes[] = { MLX5_OPCODE_SEND, MLX5_OPCODE_RDMA_WRITE,
					   MLX5_OPCODE_RDMA_READ };
	uint8_t opcode = opcodes[below(sizeof(opcodes))];
	struct mlx5_wqe_ctrl_seg *ctrl = sq_bb(q, q->sq_pi);
	struct mlx5_wqe_raddr_seg *r = (void *)(ctrl + 1);
	uint32_t len = below(4096), ds = opcode == MLX5_OPCODE_SEND ? 2 : 3;
	struct mlx5_wqe_data_seg *d = ds == 2 ? (void *)r : (void *)(r + 1);

	r->raddr = htobe64((uintptr_t)buf->p + BUF_LEN / 2);
	r->rkey = htobe32(buf->mr->rkey);
	r->reserved = 0;
	mlx5dv_set_data_seg(d, len, buf->mr->lkey, (uintptr_t)buf->p);
	mlx5dv_set_ctrl_seg(ctrl, (uint16_t)q->sq_pi, opcode, 0, q->qp->qp_num,
			    MLX5_WQE_CTRL_CQ_UPDATE, (uint8_t)ds, 0, 0);
	store_be32(&q->dv.dbrec[MLX5_SND_DBR], ++q->sq_pi & 0xffff);
}

/* A good UD SEND to the QP itself (two BBs, which may wrap). */
static void post_ud_send(struct world *w, struct dv_qp *q)
{
	struct mlx5_wqe_datagram_seg dgram = { .av = *w->dvah.av };
	struct mlx5_wqe_data_seg data;

	dgram.av.dqp_dct = htobe32(q->qp->qp_num | MLX5_EXTENDED_UD_AV);
	dgram.av.key.qkey.qkey = htobe32(QKEY);
	mlx5dv_set_data_seg(&data, below(512), buf->mr->lkey, (uintptr_t)buf->p);
	mlx5dv_set_ctrl_seg(sq_bb(q, q->sq_pi), (uint16_t)q->sq_pi, MLX5_OPCODE_SEND, 0,
			    q->qp->qp_num, MLX5_WQE_CTRL_CQ_UPDATE, 1 + DATAGRAM_DS + 1, 0, 0);
	memcpy((struct mlx5_wqe_ctrl_seg *)sq_bb(q, q->sq_pi) + 1, &dgram, sizeof(dgram));
	memcpy(sq_bb(q, q->sq_pi + 1), &data, sizeof(data));
	q->sq_pi += 2;
	store_be32(&q->dv.dbrec[MLX5_SND_DBR], q->sq_pi & 0xffff);
}

/* A good receive WQE in the RQ, or in the SRQ for the QP on it. */
static void post_receive(struct world *w, struct dv_qp *q)
{
	struct mlx5_wqe_data_seg *d;

	if (q->dv.rq.wqe_cnt) {
		d = (void *)((uint8_t *)q->dv.rq.buf +
			     (size_t)(q->rq_pi & (q->dv.rq.wqe_cnt - 1)) * q->dv.rq.stride);
		mlx5dv_set_data_seg(d, BUF_LEN / 2, buf->mr->lkey, (uintptr_t)buf->p);
		store_be32(&q->dv.dbrec[MLX5_RCV_DBR], ++q->rq_pi & 0xffff);
		return;
	}
	d = (void *)((uint8_t *)w->dvsrq.buf + (size_t)(w->srq_pi & (w->srq_cnt - 1)) *
		     w->dvsrq.stride + sizeof(struct mlx5_wqe_srq_next_seg));
	mlx5dv_set_data_seg(d, BUF_LEN / 2, buf->mr->lkey, (uintptr_t)buf->p);
	store_be32(w->dvsrq.dbrec, ++w->srq_pi & 0xffff);
}

/* A doorbell record word near what the program posted, or anything at all. */
static uint32_t doorbell_value(uint32_t pi)
{
	switch (below(3)) {
	case 0:
		return (pi + below(8)) & 0xffff;
	case 1:
		return (uint32_t)rnd() & 0xffff;
	default:
		return (uint32_t)rnd();
	}
}

/* The BlueFlame register: the first 64 bytes of a WQE, in 8-byte stores, halves in turn. */
static void blueflame(struct dv_qp *q)
{
	uint64_t *reg = (uint64_t *)((uint8_t *)q->dv.bf.reg + q->bf_half * q->dv.bf.size);
	const uint64_t *src = sq_bb(q, below(q->dv.sq.wqe_cnt));

	for (int i = 0; i < 8; i++)
		__atomic_store_n(&reg[i], src[i], __ATOMIC_RELAXED);
	q->bf_half ^= 1;
}

/* Completion and async events, as they come: taken and acknowledged, never waited for. */
static void drain_events(struct world *w)
{
	struct ibv_async_event ev;
	struct ibv_cq *cq;
	void *cq_ctx;

	while (w->channel && !ibv_get_cq_event(w->channel, &cq, &cq_ctx)) {
		ibv_ack_cq_events(cq, 1);
		cq_events++;
	}
	while (!ibv_get_async_event(dev.ctx, &ev)) {
		if ((unsigned int)ev.event_type < sizeof(events) / sizeof(events[0]))
			events[ev.event_type]++;
		ibv_ack_async_event(&ev);
	}
}

static void scribble_once(struct world *w)
{
	struct dv_qp *q = &w->qp[below(3)];
	struct mlx5dv_cq *cq = &w->dvcq[below(2)];

	switch (below(16)) {
	case 0:
	case 1:
	case 2:
		scribble_ctrl(q);
		break;
	case 3:
		/* UD's datagram segments stay as written: its AVs name no address of the world. */
		if (q != &w->qp[UD])
			scribble_word(q->dv.sq.buf, (size_t)q->dv.sq.wqe_cnt * q->dv.sq.stride);
		break;
	case 4:
	case 5:
		if (q == &w->qp[UD])
			post_ud_send(w, q);
		else
			post_rc_send(q);
		break;
	case 6:
		store_be32(&q->dv.dbrec[MLX5_SND_DBR], doorbell_value(q->sq_pi));
		break;
	case 7:
		post_receive(w, q);
		break;
	case 8:
		if (q->dv.rq.wqe_cnt)
			scribble_word(q->dv.rq.buf, (size_t)q->dv.rq.wqe_cnt * q->dv.rq.stride);
		else
			scribble_word(w->dvsrq.buf, (size_t)w->srq_cnt * w->dvsrq.stride);
		break;
	case 9:
		if (q->dv.rq.wqe_cnt)
			store_be32(&q->dv.dbrec[MLX5_RCV_DBR], doorbell_value(q->rq_pi));
		else
			store_be32(w->dvsrq.dbrec, doorbell_value(w->srq_pi));
		break;
	case 10:
		store_be32(&cq->dbrec[0], (uint32_t)rnd() & 0xffffff);
		break;
	case 11:
		store_be32(&cq->dbrec[1], (uint32_t)rnd());
		break;
	case 12:
		scribble_word(cq->buf, (size_t)cq->cqe_cnt * cq->cqe_size);
		break;
	case 13:
		blueflame(q);
		break;
	default:
		drain_events(w);
		break;
	}
}

static bool init_obj(void *in, void *out, uint64_t type)
{
	struct mlx5dv_obj obj;

	memset(&obj, 0, sizeof(obj));
	if (type == MLX5DV_OBJ_QP)
		obj.qp = (typeof(obj.qp)){ in, out };
	else if (type == MLX5DV_OBJ_CQ)
		obj.cq = (typeof(obj.cq)){ in, out };
	else if (type == MLX5DV_OBJ_SRQ)
		obj.srq = (typeof(obj.srq)){ in, out };
	else
		obj.ah = (typeof(obj.ah)){ in, out };
	return !mlx5dv_init_obj(&obj, type);
}

/* QP i, in RESET, to RTS: the RC QPs towards each other, UD on its own; 0 or the errno value. */
static int qp_to_rts_from_reset(struct world *w, int i)
{
	w->qp[i].sq_pi = w->qp[i].rq_pi = 0;	/* RESET zeroed the doorbell record */
	if (i == UD)
		return ud_to_rts(w->qp[UD].qp, QKEY, PSN_A);
	return qp_connect(w->qp[i].qp, w->qp[i == RC_RQ ? RC_SRQ : RC_RQ].qp->qp_num, &dev.gid,
			  i == RC_RQ ? PSN_A : PSN_B, i == RC_RQ ? PSN_B : PSN_A, &knobs);
}

static struct ibv_qp *qp_new(struct world *w, enum ibv_qp_type type, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr attr = {
		.send_cq = w->cq[0], .recv_cq = w->cq[1], .srq = srq, .qp_type = type,
		.cap = { .max_send_wr = 32, .max_recv_wr = srq ? 0 : 32, .max_send_sge = 2,
			 .max_recv_sge = 2, .max_inline_data = 64 },
	};

	return ibv_create_qp(dev.pd, &attr);
}

/* Everything of one round, connected and handed out; false when some step failed. */
static bool world_make(struct world *w)
{
	struct ibv_srq_init_attr srq_attr = { .attr = { .max_wr = 32, .max_sge = 2 } };
	struct ibv_ah_attr ah_attr = { .is_global = 1, .port_num = 1,
				       .grh = { .dgid = dev.gid, .hop_limit = 64 } };
	bool ok = true;

	memset(w, 0, sizeof(*w));
	w->channel = ibv_create_comp_channel(dev.ctx);
	w->cq[0] = w->channel ? ibv_create_cq(dev.ctx, 64, NULL, w->channel, 0) : NULL;
	w->cq[1] = ibv_create_cq(dev.ctx, 64, NULL, NULL, 0);
	w->srq = ibv_create_srq(dev.pd, &srq_attr);
	w->ah = ibv_create_ah(dev.pd, &ah_attr);
	if (!w->cq[0] || !w->cq[1] || !w->srq || !w->ah ||
	    fcntl(w->channel->fd, F_SETFL, O_NONBLOCK))
		return false;
	w->qp[RC_RQ] = (struct dv_qp){ .name = "RC", .qp = qp_new(w, IBV_QPT_RC, NULL) };
	w->qp[RC_SRQ] = (struct dv_qp){ .name = "RC on an SRQ", .qp = qp_new(w, IBV_QPT_RC, w->srq) };
	w->qp[UD] = (struct dv_qp){ .name = "UD", .qp = qp_new(w, IBV_QPT_UD, NULL) };
	for (int i = 0; i < 3; i++)
		ok = ok && w->qp[i].qp && init_obj(w->qp[i].qp, &w->qp[i].dv, MLX5DV_OBJ_QP);
	for (int i = 0; i < 2; i++)
		ok = ok && init_obj(w->cq[i], &w->dvcq[i], MLX5DV_OBJ_CQ);
	ok = ok && init_obj(w->srq, &w->dvsrq, MLX5DV_OBJ_SRQ) &&
	     init_obj(w->ah, &w->dvah, MLX5DV_OBJ_AH);
	if (!ok)
		return false;
	w->srq_cnt = w->dvsrq.tail + 1;	/* mlx5 links a fresh SRQ 0 -> ... -> tail */
	for (int i = 0; i < 3; i++)
		ok = ok && !qp_to_rts_from_reset(w, i);
	return ok;
}

static void world_free(struct world *w)
{
	drain_events(w);
	for (int i = 0; i < 3; i++)
		if (w->qp[i].qp)
			ibv_destroy_qp(w->qp[i].qp);
	if (w->ah)
		ibv_destroy_ah(w->ah);
	if (w->srq)
		ibv_destroy_srq(w->srq);
	for (int i = 0; i < 2; i++)
		if (w->cq[i])
			ibv_destroy_cq(w->cq[i]);
	if (w->channel)
		ibv_destroy_comp_channel(w->channel);
}

static enum ibv_qp_state qp_state_of(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;

	return ibv_query_qp(qp, &attr, IBV_QP_STATE, &init) ? IBV_QPS_UNKNOWN : attr.qp_state;
}

/*
 * Every QP in ERR through RESET back to RTS, so that scribbles meet the
 * engines again. In RTR one may fail again before it reaches RTS (its
 * peer's packets meet the broken SRQ): then the move to RTS is refused,
 * and it is in ERR; any other refusal is counted as one.
 */
static void revive(struct world *w)
{
	struct ibv_qp_attr reset = { .qp_state = IBV_QPS_RESET };
	int err;

	for (int i = 0; i < 3; i++) {
		if (qp_state_of(w->qp[i].qp) != IBV_QPS_ERR)
			continue;
		err = ibv_modify_qp(w->qp[i].qp, &reset, IBV_QP_STATE);
		if (!err)
			err = qp_to_rts_from_reset(w, i);
		if (!err)
			revived++;
		else if (qp_state_of(w->qp[i].qp) == IBV_QPS_ERR)
			failed_again++;
		else if (!not_revived++)
			check(false, "the %s QP from ERR through RESET to RTS: %s", w->qp[i].name,
			      strerror(err));
	}
}

/* The SQ as issue 20 had it: two-BB WQEs of garbage everywhere, an odd doorbell. */
static void garbage_sq(struct dv_qp *q)
{
	for (uint32_t bb = 0; bb < q->dv.sq.wqe_cnt; bb += 2) {
		memset(sq_bb(q, bb), 0xa5, 2 * q->dv.sq.stride);
		mlx5dv_set_ctrl_seg(sq_bb(q, bb), (uint16_t)bb, MLX5_OPCODE_TSO, 0, q->qp->qp_num,
				    MLX5_WQE_CTRL_CQ_UPDATE, GARBAGE_DS, 0, 0);
	}
	q->sq_pi += 3;
	store_be32(&q->dv.dbrec[MLX5_SND_DBR], q->sq_pi & 0xffff);
}

/*
 * Garbage and an odd doorbell on every SQ; each QP in ERR within
 * ERR_WAIT_MS. A doorbell that happened to be where the daemon already
 * was names nothing: rung again further on until the QP is in ERR.
 */
static void break_all(struct world *w, int round)
{
	struct timespec start;
	unsigned int in_err = 0;

	for (int i = 0; i < 3; i++)
		garbage_sq(&w->qp[i]);
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (in_err < 3 && elapsed_ms(&start) < ERR_WAIT_MS) {
		usleep(ERR_REDOORBELL_MS * 1000);
		drain_events(w);
		in_err = 0;
		for (int i = 0; i < 3; i++) {
			if (qp_state_of(w->qp[i].qp) == IBV_QPS_ERR)
				in_err++;
			else
				garbage_sq(&w->qp[i]);
		}
	}
	for (int i = 0; i < 3; i++)
		check(qp_state_of(w->qp[i].qp) == IBV_QPS_ERR, "round %d: the %s QP is in ERR",
		      round, w->qp[i].name);
}

int main(int argc, char **argv)
{
	unsigned long seed, scribbles;
	struct world w;

	if (argc != 4) {
		fprintf(stderr, "usage: ring_scribble DEVICE SEED SCRIBBLES\n");
		return 2;
	}
	seed = strtoul(argv[2], NULL, 0);
	scribbles = strtoul(argv[3], NULL, 0);
	printf("seed %lu, %lu scribbles in %d rounds\n", seed, scribbles, ROUNDS);
	rng = seed * 0x9e3779b97f4a7c15ull + 1;
	if (!dev_open(&dev, argv[1]))
		return checks_finish();
	buf = buf_new(&dev, BUF_LEN, BUF_LEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		      IBV_ACCESS_REMOTE_READ, 0);
	if (!buf || fcntl(dev.ctx->async_fd, F_SETFL, O_NONBLOCK))
		return checks_finish();
	for (int round = 0; round < ROUNDS; round++) {
		if (!world_make(&w)) {
			check(false, "round %d: QPs, CQs, SRQ and AH made and handed out: %s", round,
			      strerror(errno));
			world_free(&w);
			break;
		}
		for (unsigned long i = 0; i < scribbles / ROUNDS; i++) {
			scribble_once(&w);
			if (i % PACE_EVERY == PACE_EVERY - 1)
				usleep(PACE_US);
			if (i % REVIVE_EVERY == REVIVE_EVERY - 1)
				revive(&w);
		}
		break_all(&w, round);
		world_free(&w);
	}
	check(revived && !not_revived,
	      "%lu QPs taken from ERR through RESET back to RTS, %lu in ERR again on the way, %lu refused otherwise",
	      revived, failed_again, not_revived);
	printf("events: %lu QP_FATAL, %lu QP_REQ_ERR, %lu QP_ACCESS_ERR, %lu CQ_ERR, %lu SRQ_ERR, %lu LAST_WQE_REACHED, %lu completion\n",
	       events[IBV_EVENT_QP_FATAL], events[IBV_EVENT_QP_REQ_ERR],
	       events[IBV_EVENT_QP_ACCESS_ERR], events[IBV_EVENT_CQ_ERR], events[IBV_EVENT_SRQ_ERR],
	       events[IBV_EVENT_QP_LAST_WQE_REACHED], cq_events);
	bufs_free();
	dev_close(&dev);
	return checks_finish();
}
