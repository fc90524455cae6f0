/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * mlx5 DC through the public mlx5dv API: DCIs on device A, DCTs on device
 * B (mlx5dv_create_qp with MLX5DV_QP_INIT_ATTR_MASK_DC), every WR's DCT
 * given by mlx5dv_wr_set_dc_addr(_stream). Many DCIs send to one DCT, one
 * DCI sends, writes, reads and adds at three DCTs in turn, a wrong access
 * key is refused (the DCI's retries run out, the DCT takes nothing), an
 * error in one DCI stream leaves the others running until
 * mlx5dv_dci_stream_id_reset, the DCI fails once 1 << log_num_errored
 * streams are in error, and a WRITE WQE written into a DCI's send
 * queue by hand (ctrl, the datagram segment with the DCT and key, raddr,
 * data, as a ConnectX reads them) lands. Data checked everywhere.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <infiniband/mlx5dv.h>

#include "tests/e2e/harness/verbs_pair.h"

#define DC_KEY UINT64_C(0x1122334455667788)
#define MSG 3000			/* three packets at MTU 1024 */
#define DCIS 4
#define PER_DCI 16
#define DCTS 3
#define DCI_OPS (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_READ | \
		 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)
#define REMOTE_ALL (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
		    IBV_ACCESS_REMOTE_ATOMIC)

struct dct {
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	struct ibv_qp *qp;
	struct ibv_ah *ah;		/* on device A, towards it */
};

/*
 * A DCT on device B with its own CQ and SRQ of n receives, taken to RTR
 * with an AV with or without GRH; NULL-free on failure.
 */
static bool dct_open(struct dct *t, uint64_t key, int n, bool grh)
{
	struct ibv_srq_init_attr sattr = { .attr = { .max_wr = (uint32_t)n + 1, .max_sge = 1 } };
	struct mlx5dv_qp_init_attr dv = { .comp_mask = MLX5DV_QP_INIT_ATTR_MASK_DC,
					  .dc_init_attr = { .dc_type = MLX5DV_DCTYPE_DCT,
							    .dct_access_key = key } };
	struct ibv_qp_init_attr_ex attr = { .qp_type = IBV_QPT_DRIVER, .pd = dev_b.pd,
					    .comp_mask = IBV_QP_INIT_ATTR_PD };
	struct ibv_ah_attr ah = { .is_global = 1, .port_num = 1,
				  .grh = { .dgid = dev_b.gid, .hop_limit = 64 } };
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				  .qp_access_flags = REMOTE_ALL & ~IBV_ACCESS_LOCAL_WRITE };

	memset(t, 0, sizeof(*t));
	t->cq = ibv_create_cq(dev_b.ctx, 256, NULL, NULL, 0);
	t->srq = t->cq ? ibv_create_srq(dev_b.pd, &sattr) : NULL;
	attr.send_cq = attr.recv_cq = t->cq;
	attr.srq = t->srq;
	t->qp = t->srq ? mlx5dv_create_qp(dev_b.ctx, &attr, &dv) : NULL;
	if (!t->qp) {
		check(false, "DCT: CQ, SRQ and mlx5dv_create_qp: %s", strerror(errno));
		return false;
	}
	if (ibv_modify_qp(t->qp, &qa, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS)) {
		check(false, "DCT to INIT");
		return false;
	}
	qa = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
				   .min_rnr_timer = 1,
				   .ah_attr = { .is_global = grh, .port_num = 1,
						.grh = { .dgid = dev_a.gid, .hop_limit = 64 } } };
	if (ibv_modify_qp(t->qp, &qa, IBV_QP_STATE | IBV_QP_MIN_RNR_TIMER | IBV_QP_AV |
			  IBV_QP_PATH_MTU)) {
		check(false, "DCT to RTR");
		return false;
	}
	t->ah = ibv_create_ah(dev_a.pd, &ah);
	if (!t->ah)
		check(false, "AH towards %s: %s", dev_b.name, strerror(errno));
	return t->ah != NULL;
}

static void dct_close(struct dct *t)
{
	if (t->ah)
		ibv_destroy_ah(t->ah);
	if (t->qp)
		ibv_destroy_qp(t->qp);
	if (t->srq)
		ibv_destroy_srq(t->srq);
	if (t->cq)
		ibv_destroy_cq(t->cq);
}

/* What a check makes, closed together at its end. */
struct rig {
	struct ibv_cq *cq;		/* the DCIs' */
	struct ibv_qp *dci[DCIS];
	struct dct dct[DCTS];
};

static void rig_close(struct rig *r)
{
	for (int i = 0; i < DCIS; i++)
		if (r->dci[i])
			ibv_destroy_qp(r->dci[i]);
	for (int i = 0; i < DCTS; i++)
		dct_close(&r->dct[i]);
	if (r->cq)
		ibv_destroy_cq(r->cq);
	bufs_free();
}

/* qp (a DCI in RESET) through INIT and RTR to RTS; 0 or the errno value. */
static int dci_to_rts(struct ibv_qp *qp, uint8_t timeout, uint8_t retry_cnt)
{
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_INIT, .port_num = 1 };

	if (ibv_modify_qp(qp, &qa, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT))
		return errno;
	qa = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024 };
	if (ibv_modify_qp(qp, &qa, IBV_QP_STATE | IBV_QP_PATH_MTU))
		return errno;
	qa = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .timeout = timeout,
				   .retry_cnt = retry_cnt, .rnr_retry = 7, .sq_psn = PSN_A,
				   .max_rd_atomic = 4 };
	if (ibv_modify_qp(qp, &qa, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
		return errno;
	return 0;
}

/* A DCI on device A (streams: 1 << log_streams of them, 0: none; two may be in error), taken to RTS. */
static struct ibv_qp *dci_open(struct ibv_cq *cq, uint8_t log_streams, uint8_t timeout,
			       uint8_t retry_cnt)
{
	struct mlx5dv_qp_init_attr dv = { .comp_mask = MLX5DV_QP_INIT_ATTR_MASK_DC,
					  .dc_init_attr = { .dc_type = MLX5DV_DCTYPE_DCI } };
	struct ibv_qp_init_attr_ex attr = {
		.qp_type = IBV_QPT_DRIVER, .pd = dev_a.pd, .send_cq = cq, .recv_cq = cq,
		.cap = { .max_send_wr = 64, .max_send_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = DCI_OPS,
	};
	struct ibv_qp *qp;
	int err;

	if (log_streams) {
		dv.comp_mask |= MLX5DV_QP_INIT_ATTR_MASK_DCI_STREAMS;
		dv.dc_init_attr.dci_streams.log_num_concurent = log_streams;
		dv.dc_init_attr.dci_streams.log_num_errored = 1;
	}
	qp = mlx5dv_create_qp(dev_a.ctx, &attr, &dv);
	if (!qp) {
		check(false, "DCI: mlx5dv_create_qp: %s", strerror(errno));
		return NULL;
	}
	err = dci_to_rts(qp, timeout, retry_cnt);
	if (!err)
		return qp;
	check(false, "DCI through INIT, RTR, RTS: %s", strerror(err));
	ibv_destroy_qp(qp);
	return NULL;
}

struct dc_wr {
	enum ibv_wr_opcode op;
	uint64_t wr_id;
	struct ibv_sge sge;
	uint64_t raddr;
	uint32_t rkey;
	uint64_t add;
	const struct dct *to;
	uint64_t key;
	uint16_t stream;
};

/* One signaled WR through ibv_wr_* and mlx5dv_wr_set_dc_addr_stream. */
static bool dc_post(struct ibv_qp *qp, const struct dc_wr *w)
{
	struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(qp);
	struct mlx5dv_qp_ex *dv = mlx5dv_qp_ex_from_ibv_qp_ex(qpx);
	int err;

	if (!dv) {
		check(false, "mlx5dv_qp_ex_from_ibv_qp_ex: %s", strerror(errno));
		return false;
	}
	ibv_wr_start(qpx);
	qpx->wr_id = w->wr_id;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	switch (w->op) {
	case IBV_WR_RDMA_WRITE:
		ibv_wr_rdma_write(qpx, w->rkey, w->raddr);
		break;
	case IBV_WR_RDMA_READ:
		ibv_wr_rdma_read(qpx, w->rkey, w->raddr);
		break;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		ibv_wr_atomic_fetch_add(qpx, w->rkey, w->raddr, w->add);
		break;
	default:
		ibv_wr_send(qpx);
		break;
	}
	mlx5dv_wr_set_dc_addr_stream(dv, w->to->ah, w->to->qp->qp_num, w->key, w->stream);
	ibv_wr_set_sge(qpx, w->sge.lkey, w->sge.addr, w->sge.length);
	err = ibv_wr_complete(qpx);
	if (err)
		check(false, "post wr_id 0x%" PRIx64 ": %s", w->wr_id, strerror(err));
	return !err;
}

/* n receives of len bytes each into b, wr_id their index. */
static bool srq_fill(struct ibv_srq *srq, struct buf *b, int n, size_t len)
{
	for (int i = 0; i < n; i++) {
		struct ibv_sge sge = sge_of(b, (size_t)i * len, len);
		struct ibv_recv_wr wr = { .wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1 }, *bad;

		if (ibv_post_srq_recv(srq, &wr, &bad)) {
			check(false, "ibv_post_srq_recv");
			return false;
		}
	}
	return true;
}

/* Every DCI's SENDs reach the one DCT, in each DCI's order; every DCI's WRITE lands. */
static void many_dcis_one_dct(void)
{
	const int n = DCIS * PER_DCI;
	struct rig r = { .cq = ibv_create_cq(dev_a.ctx, 256, NULL, NULL, 0) };
	struct buf *src = buf_new(&dev_a, (size_t)DCIS * MSG, (size_t)DCIS * MSG, REMOTE_ALL, 0);
	struct buf *dst = buf_new(&dev_b, (size_t)n * MSG, (size_t)n * MSG, REMOTE_ALL, UNTOUCHED);
	struct buf *win = buf_new(&dev_b, (size_t)DCIS * MSG, (size_t)DCIS * MSG, REMOTE_ALL,
				  UNTOUCHED);
	unsigned int from[DCIS] = { 0 };
	struct ibv_wc wc;
	int got = 0, i, j;

	if (!r.cq || !src || !dst || !win || !dct_open(&r.dct[0], DC_KEY, n, true))
		goto out;
	check(r.dct[0].qp->qp_type == IBV_QPT_DRIVER, "a DCT is an IBV_QPT_DRIVER QP, as on mlx5");
	for (i = 0; i < DCIS; i++) {
		fill_pattern(src->p + (size_t)i * MSG, MSG, (unsigned int)i, 0);
		if (!(r.dci[i] = dci_open(r.cq, 0, 14, 7)))
			goto out;
	}
	if (!srq_fill(r.dct[0].srq, dst, n, MSG))
		goto out;
	/* Interleaved: DCI 0, 1, 2, 3, 0, 1... each a SEND of its own pattern. */
	for (j = 0; j < PER_DCI; j++)
		for (i = 0; i < DCIS; i++) {
			struct dc_wr w = { .op = IBV_WR_SEND, .wr_id = (uint64_t)(i << 8 | j),
					   .sge = sge_of(src, (size_t)i * MSG, MSG), .to = &r.dct[0],
					   .key = DC_KEY };

			if (!dc_post(r.dci[i], &w))
				goto out;
		}
	for (i = 0; i < DCIS; i++) {
		struct dc_wr w = { .op = IBV_WR_RDMA_WRITE, .wr_id = 0xff00u | (unsigned)i,
				   .sge = sge_of(src, (size_t)i * MSG, MSG),
				   .raddr = raddr_of(win, (size_t)i * MSG), .rkey = win->mr->rkey,
				   .to = &r.dct[0], .key = DC_KEY };

		if (!dc_post(r.dci[i], &w))
			goto out;
	}
	for (i = 0; i < n + DCIS; i++)
		if (wait_wc(r.cq, &wc) <= 0 || wc.status != IBV_WC_SUCCESS)
			break;
	check(i == n + DCIS, "%d DCIs: %d of %d sends and writes completed", DCIS, i, n + DCIS);
	/* The DCT's receives: each names the DCT and holds one DCI's message whole. */
	while (got < n && wait_wc(r.dct[0].cq, &wc) > 0 && wc.status == IBV_WC_SUCCESS &&
	       wc.qp_num == r.dct[0].qp->qp_num && wc.byte_len == MSG) {
		const uint8_t *p = dst->p + wc.wr_id * MSG;

		for (i = 0; i < DCIS; i++)
			if (pattern_mismatch(p, MSG, (unsigned int)i, 0) == MSG)
				from[i]++;
		got++;
	}
	check(got == n, "DCT 0x%06x: %d of %d receives of %d bytes", r.dct[0].qp->qp_num, got, n,
	      MSG);
	for (i = 0; i < DCIS; i++)
		check(from[i] == PER_DCI, "DCI %d: %u of %d messages whole at the DCT", i, from[i],
		      PER_DCI);
	for (i = 0; i < DCIS; i++)
		check_pattern(win->p + (size_t)i * MSG, MSG, (unsigned int)i, 0, "a DCI's WRITE");
out:
	rig_close(&r);
}

/* One DCI, a WR to each of three DCTs in turn: SEND, WRITE, READ, fetch-and-add each. */
static void one_dci_many_dcts(void)
{
	struct rig r = { .cq = ibv_create_cq(dev_a.ctx, 256, NULL, NULL, 0) };
	struct buf *src = buf_new(&dev_a, (size_t)DCTS * 3 * MSG, (size_t)DCTS * 3 * MSG,
				  REMOTE_ALL, 0);
	struct buf *dst = buf_new(&dev_b, (size_t)DCTS * 2 * MSG + 8 * DCTS,
				  (size_t)DCTS * 2 * MSG + 8 * DCTS, REMOTE_ALL, UNTOUCHED);
	struct buf *old = buf_new(&dev_a, 8 * DCTS, 8 * DCTS, REMOTE_ALL, 0);
	struct ibv_wc wc;
	int i, k, done = 0;
	uint64_t *counter;

	if (!r.cq || !src || !dst || !old)
		goto out;
	for (i = 0; i < DCTS; i++)
		if (!dct_open(&r.dct[i], DC_KEY + (uint64_t)i, 1, true))
			goto out;
	if (!(r.dci[0] = dci_open(r.cq, 0, 14, 7)))
		goto out;
	counter = (uint64_t *)(dst->p + (size_t)DCTS * 2 * MSG);	/* after SEND and WRITE areas */
	for (i = 0; i < DCTS; i++) {
		fill_pattern(src->p + (size_t)i * MSG, MSG, 10u + (unsigned int)i, 0);
		fill_pattern(dst->p + (size_t)(DCTS + i) * MSG + 64, MSG - 64, 20u + (unsigned int)i,
			     0);
		counter[i] = 1000u * (unsigned int)i;
	}
	for (i = 0; i < DCTS; i++) {
		struct ibv_sge rs = sge_of(dst, (size_t)i * MSG, MSG);
		struct ibv_recv_wr rw = { .wr_id = (uint64_t)i, .sg_list = &rs, .num_sge = 1 }, *bad;

		if (ibv_post_srq_recv(r.dct[i].srq, &rw, &bad))
			goto out;
	}
	/* Round k: to DCT 0, 1, 2, each WR its own DCT: the DCI reconnects at every WR. */
	for (k = 0; k < 4; k++)
		for (i = 0; i < DCTS; i++) {
			struct dc_wr w = { .wr_id = (uint64_t)(k << 8 | i), .to = &r.dct[i],
					   .key = DC_KEY + (uint64_t)i };

			switch (k) {
			case 0:
				w.op = IBV_WR_SEND;
				w.sge = sge_of(src, (size_t)i * MSG, MSG);
				break;
			case 1:	/* into the DCT's SEND area, after what the SEND brought */
				w.op = IBV_WR_RDMA_WRITE;
				w.sge = sge_of(src, (size_t)i * MSG, 64);
				w.raddr = raddr_of(dst, (size_t)(DCTS + i) * MSG);
				w.rkey = dst->mr->rkey;
				break;
			case 2:
				w.op = IBV_WR_RDMA_READ;
				w.sge = sge_of(src, (size_t)(DCTS + i) * MSG, MSG);
				w.raddr = raddr_of(dst, (size_t)(DCTS + i) * MSG);
				w.rkey = dst->mr->rkey;
				break;
			default:
				w.op = IBV_WR_ATOMIC_FETCH_AND_ADD;
				w.sge = sge_of(old, 8u * (unsigned int)i, 8);
				w.raddr = raddr_of(dst, (size_t)DCTS * 2 * MSG + 8u * (unsigned int)i);
				w.rkey = dst->mr->rkey;
				w.add = 7;
				break;
			}
			if (!dc_post(r.dci[0], &w))
				goto out;
		}
	for (done = 0; done < 4 * DCTS; done++)
		if (wait_wc(r.cq, &wc) <= 0 || wc.status != IBV_WC_SUCCESS ||
		    wc.wr_id != (uint64_t)((done / DCTS) << 8 | done % DCTS))
			break;
	check(done == 4 * DCTS, "one DCI, %d DCTs: %d of %d WRs completed in order", DCTS, done,
	      4 * DCTS);
	for (i = 0; i < DCTS; i++) {
		bool recv = wait_wc(r.dct[i].cq, &wc) > 0 && wc.status == IBV_WC_SUCCESS &&
			    wc.qp_num == r.dct[i].qp->qp_num && wc.byte_len == MSG;
		uint64_t got_old;

		check(recv, "DCT %d (key %#" PRIx64 "): its SEND received", i, DC_KEY + (uint64_t)i);
		check_pattern(dst->p + (size_t)i * MSG, MSG, 10u + (unsigned int)i, 0, "SEND data");
		/* The READ brought the WRITE's 64 bytes and what was there after them. */
		check_pattern(src->p + (size_t)(DCTS + i) * MSG, 64, 10u + (unsigned int)i, 0,
			      "READ of the WRITE's bytes");
		check_pattern(src->p + (size_t)(DCTS + i) * MSG + 64, MSG - 64,
			      20u + (unsigned int)i, 0, "READ of the DCT's bytes");
		memcpy(&got_old, old->p + 8 * i, 8);
		check(got_old == 1000u * (unsigned int)i && counter[i] == 1000u * (unsigned int)i + 7,
		      "DCT %d: fetch-and-add returned %" PRIu64 ", the counter is %" PRIu64, i,
		      got_old, counter[i]);
	}
out:
	rig_close(&r);
}

/* A wrong key: the DCT takes nothing, the DCI's retries run out. */
static void wrong_key(void)
{
	struct rig r = { .cq = ibv_create_cq(dev_a.ctx, 16, NULL, NULL, 0) };
	struct buf *src = buf_new(&dev_a, 64, 64, REMOTE_ALL, 0x11);
	struct buf *dst = buf_new(&dev_b, 64, 64, REMOTE_ALL, UNTOUCHED);
	struct ibv_wc wc;

	if (!r.cq || !src || !dst || !dct_open(&r.dct[0], DC_KEY, 1, true) ||
	    !srq_fill(r.dct[0].srq, dst, 1, 64))
		goto out;
	/* 4.096 us * 2^10 = 4 ms a try, 2 retries. */
	if (!(r.dci[0] = dci_open(r.cq, 0, 10, 2)))
		goto out;
	struct dc_wr w = { .op = IBV_WR_SEND, .wr_id = 0x4b, .sge = sge_of(src, 0, 64),
			   .to = &r.dct[0], .key = DC_KEY ^ 1 };

	if (!dc_post(r.dci[0], &w))
		goto out;
	expect_wc(r.cq, "SEND with a wrong DC key", (struct want){ .wr_id = 0x4b,
		  .status = IBV_WC_RETRY_EXC_ERR, .opcode = -1, .byte_len = -1 }, NULL);
	check(poll_wc(r.dct[0].cq, &wc, 200) == 0, "the DCT completed nothing");
	check_untouched(dst->p, 64, UNTOUCHED, "the DCT's receive buffer");
	expect_state(r.dci[0], IBV_QPS_ERR, "a DCI without streams fails as an RC QP does");
out:
	rig_close(&r);
}

/*
 * Stream 9 fails (bad rkey): it flushes until reset, streams 0 and 2 go on,
 * the DCI stays RTS. Stream ids are the caller's, not slots: 9 is a
 * stream of a DCI of 4 concurrent ones, as rdma-core's DCI stream tests use.
 */
static void stream_isolation(void)
{
	struct rig r = { .cq = ibv_create_cq(dev_a.ctx, 64, NULL, NULL, 0) };
	struct buf *src = buf_new(&dev_a, 4 * MSG, 4 * MSG, REMOTE_ALL, 0);
	struct buf *dst = buf_new(&dev_b, 4 * MSG, 4 * MSG, REMOTE_ALL, UNTOUCHED);
	struct buf *ro = buf_new(&dev_b, MSG, MSG, IBV_ACCESS_LOCAL_WRITE, UNTOUCHED);
	static const struct {
		uint16_t stream;
		bool to_ro;		/* into an MR without remote write: a remote access error */
		enum ibv_wc_status status;
		int slot;
	} wrs[] = {
		{ 0, false, IBV_WC_SUCCESS, 0 },
		{ 9, true, IBV_WC_REM_ACCESS_ERR, -1 },
		{ 9, false, IBV_WC_WR_FLUSH_ERR, 1 },
		{ 2, false, IBV_WC_SUCCESS, 2 },
	};
	size_t i;

	if (!r.cq || !src || !dst || !ro || !dct_open(&r.dct[0], DC_KEY, 1, true) ||
	    !(r.dci[0] = dci_open(r.cq, 2, 14, 7)))
		goto out;
	fill_pattern(src->p, 4 * MSG, 40, 0);
	for (i = 0; i < sizeof(wrs) / sizeof(wrs[0]); i++) {
		int slot = wrs[i].slot < 0 ? 3 : wrs[i].slot;
		struct dc_wr w = { .op = IBV_WR_RDMA_WRITE, .wr_id = 0x500 + i,
				   .sge = sge_of(src, (size_t)slot * MSG, MSG),
				   .raddr = wrs[i].to_ro ? raddr_of(ro, 0) : raddr_of(dst, (size_t)slot * MSG),
				   .rkey = wrs[i].to_ro ? ro->mr->rkey : dst->mr->rkey,
				   .to = &r.dct[0], .key = DC_KEY, .stream = wrs[i].stream };

		if (!dc_post(r.dci[0], &w))
			goto out;
	}
	for (i = 0; i < sizeof(wrs) / sizeof(wrs[0]); i++) {
		char what[64];

		snprintf(what, sizeof(what), "stream %u WRITE", wrs[i].stream);
		expect_wc(r.cq, what, (struct want){ .wr_id = 0x500 + i, .status = wrs[i].status,
			  .opcode = -1, .byte_len = -1 }, NULL);
	}
	expect_state(r.dci[0], IBV_QPS_RTS, "the DCI after its stream's error");
	check_pattern(dst->p, MSG, 40, 0, "stream 0's WRITE");
	check_untouched(dst->p + MSG, MSG, UNTOUCHED, "stream 9's flushed WRITE");
	check_untouched(ro->p, MSG, UNTOUCHED, "the MR without remote write");
	check_pattern(dst->p + 2 * MSG, MSG, 40, 2 * MSG, "stream 2's WRITE");
	check(mlx5dv_dci_stream_id_reset(r.dci[0], 2) == EINVAL,
	      "reset of stream 2, not in error: EINVAL");
	check(mlx5dv_dci_stream_id_reset(r.dci[0], 9) == 0, "mlx5dv_dci_stream_id_reset of stream 9");
	check(mlx5dv_dci_stream_id_reset(r.dci[0], 9) == EINVAL,
	      "stream 9 reset again, no longer in error: EINVAL");
	struct dc_wr w = { .op = IBV_WR_RDMA_WRITE, .wr_id = 0x5aa, .sge = sge_of(src, MSG, MSG),
			   .raddr = raddr_of(dst, MSG), .rkey = dst->mr->rkey, .to = &r.dct[0],
			   .key = DC_KEY, .stream = 9 };

	if (!dc_post(r.dci[0], &w))
		goto out;
	expect_wc(r.cq, "stream 9 WRITE after the reset", (struct want){ .wr_id = 0x5aa,
		  .status = IBV_WC_SUCCESS, .opcode = IBV_WC_RDMA_WRITE, .byte_len = -1 }, NULL);
	check_pattern(dst->p + MSG, MSG, 40, MSG, "stream 9's WRITE after the reset");
out:
	rig_close(&r);
}

/* A WRITE of 64 bytes from src into ro (no remote write) on stream: wr_id's completion status. */
static enum ibv_wc_status write_refused(struct rig *r, struct buf *src, struct buf *ro,
					uint16_t stream, uint64_t wr_id)
{
	struct dc_wr w = { .op = IBV_WR_RDMA_WRITE, .wr_id = wr_id, .sge = sge_of(src, 0, 64),
			   .raddr = raddr_of(ro, 0), .rkey = ro->mr->rkey, .to = &r->dct[0],
			   .key = DC_KEY, .stream = stream };
	struct ibv_wc wc = { .status = IBV_WC_GENERAL_ERR };

	if (!dc_post(r->dci[0], &w) || wait_wc(r->cq, &wc) <= 0 || wc.wr_id != wr_id)
		return IBV_WC_GENERAL_ERR;
	return wc.status;
}

/*
 * A DCI whose log_num_errored is 1 stays RTS with one stream in error and
 * goes to ERR as the second fails, that WQE completing with its own error
 * (mlx5dv_dci_stream_id_reset(3)); RESET forgets the streams in error.
 */
static void streams_errored_limit(void)
{
	struct rig r = { .cq = ibv_create_cq(dev_a.ctx, 64, NULL, NULL, 0) };
	struct buf *src = buf_new(&dev_a, 64, 64, REMOTE_ALL, 0);
	struct buf *dst = buf_new(&dev_b, 64, 64, REMOTE_ALL, UNTOUCHED);
	struct buf *ro = buf_new(&dev_b, 64, 64, IBV_ACCESS_LOCAL_WRITE, UNTOUCHED);
	struct ibv_qp_attr reset = { .qp_state = IBV_QPS_RESET };
	enum ibv_wc_status st;
	int err;

	if (!r.cq || !src || !dst || !ro || !dct_open(&r.dct[0], DC_KEY, 1, true) ||
	    !(r.dci[0] = dci_open(r.cq, 3, 14, 7)))
		goto out;
	fill_pattern(src->p, 64, 41, 0);
	st = write_refused(&r, src, ro, 3, 0x5b0);
	check(st == IBV_WC_REM_ACCESS_ERR, "stream 3's refused WRITE: %s", ibv_wc_status_str(st));
	expect_state(r.dci[0], IBV_QPS_RTS, "the DCI with 1 stream in error of 2 allowed");
	st = write_refused(&r, src, ro, 6, 0x5b1);
	check(st == IBV_WC_REM_ACCESS_ERR, "stream 6's refused WRITE: %s", ibv_wc_status_str(st));
	expect_state(r.dci[0], IBV_QPS_ERR, "the DCI once 2 streams (1 << log_num_errored) are in error");
	check(mlx5dv_dci_stream_id_reset(r.dci[0], 3) == EOPNOTSUPP,
	      "mlx5dv_dci_stream_id_reset of a DCI in ERR: EOPNOTSUPP");
	err = ibv_modify_qp(r.dci[0], &reset, IBV_QP_STATE) ? errno : dci_to_rts(r.dci[0], 14, 7);
	check(!err, "the DCI through RESET back to RTS: %s", strerror(err));
	if (err)
		goto out;
	struct dc_wr w = { .op = IBV_WR_RDMA_WRITE, .wr_id = 0x5b2, .sge = sge_of(src, 0, 64),
			   .raddr = raddr_of(dst, 0), .rkey = dst->mr->rkey, .to = &r.dct[0],
			   .key = DC_KEY, .stream = 3 };

	if (!dc_post(r.dci[0], &w))
		goto out;
	expect_wc(r.cq, "stream 3 WRITE after the DCI's RESET", (struct want){ .wr_id = 0x5b2,
		  .status = IBV_WC_SUCCESS, .opcode = IBV_WC_RDMA_WRITE, .byte_len = -1 }, NULL);
	check_pattern(dst->p, 64, 41, 0, "stream 3's WRITE after the DCI's RESET");
out:
	rig_close(&r);
}

/* A WRITE WQE written into the DCI's ring by hand, as mlx5 lays it out, and the doorbell. */
static void raw_wqe(void)
{
	struct rig r = { .cq = ibv_create_cq(dev_a.ctx, 16, NULL, NULL, 0) };
	struct buf *src = buf_new(&dev_a, MSG, MSG, REMOTE_ALL, 0);
	struct buf *dst = buf_new(&dev_b, MSG, MSG, REMOTE_ALL, UNTOUCHED);
	struct mlx5dv_qp mqp;
	struct mlx5dv_ah mah;
	struct mlx5dv_obj obj;
	struct ibv_wc wc;
	uint8_t *wqe;
	struct mlx5_wqe_datagram_seg *d;
	struct mlx5_wqe_raddr_seg *rseg;
	struct mlx5_wqe_data_seg *data;

	if (!r.cq || !src || !dst || !dct_open(&r.dct[0], DC_KEY, 1, true) ||
	    !(r.dci[0] = dci_open(r.cq, 0, 14, 7)))
		goto out;
	fill_pattern(src->p, MSG, 60, 0);
	obj = (struct mlx5dv_obj){ .qp = { .in = r.dci[0], .out = &mqp },
				   .ah = { .in = r.dct[0].ah, .out = &mah } };
	if (mlx5dv_init_obj(&obj, MLX5DV_OBJ_QP | MLX5DV_OBJ_AH) || mqp.sq.stride != 64) {
		check(false, "mlx5dv_init_obj of the DCI and the AH");
		goto out;
	}
	/* ctrl (1 ds), datagram (3), raddr (1), data (1): two BBs from index 0. */
	wqe = mqp.sq.buf;
	memset(wqe, 0, 128);
	mlx5dv_set_ctrl_seg((struct mlx5_wqe_ctrl_seg *)wqe, 0, MLX5_OPCODE_RDMA_WRITE, 0,
			    r.dci[0]->qp_num, MLX5_WQE_CTRL_CQ_UPDATE, 6, 0, 0);
	d = (struct mlx5_wqe_datagram_seg *)(wqe + sizeof(struct mlx5_wqe_ctrl_seg));
	memcpy(&d->av, mah.av, sizeof(d->av));
	d->av.dqp_dct = htobe32(r.dct[0].qp->qp_num | MLX5_EXTENDED_UD_AV);
	d->av.key.dc_key = htobe64(DC_KEY);
	rseg = (struct mlx5_wqe_raddr_seg *)(d + 1);
	rseg->raddr = htobe64(raddr_of(dst, 0));
	rseg->rkey = htobe32(dst->mr->rkey);
	data = (struct mlx5_wqe_data_seg *)(rseg + 1);
	mlx5dv_set_data_seg(data, MSG, src->mr->lkey, (uintptr_t)src->p);
	/* The WQE before the doorbell record, the record before the BlueFlame copy (mlx5). */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	mqp.dbrec[MLX5_SND_DBR] = htobe32(2);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	memcpy(mqp.bf.reg, wqe, 64);
	check(wait_wc(r.cq, &wc) > 0 && wc.status == IBV_WC_SUCCESS,
	      "the hand-written DC WRITE completed");
	check_pattern(dst->p, MSG, 60, 0, "the hand-written DC WRITE's data at the DCT");
out:
	rig_close(&r);
}

/* A DCT's AV names no peer: RTR takes one without GRH (UCX's DC probe gives none). */
static void dct_av_without_grh(void)
{
	struct rig r = { 0 };

	check(dct_open(&r.dct[0], DC_KEY, 1, false), "DCT to RTR with an AV without GRH");
	rig_close(&r);
}

static const struct named_check checks[] = {
	{ "a DCT's AV without GRH", dct_av_without_grh },
	{ "many DCIs, one DCT", many_dcis_one_dct },
	{ "one DCI, many DCTs", one_dci_many_dcts },
	{ "wrong DC access key", wrong_key },
	{ "DCI stream error isolation", stream_isolation },
	{ "DCI streams in error up to log_num_errored", streams_errored_limit },
	{ "DC WQE written by hand", raw_wqe },
};

int main(int argc, char **argv)
{
	return run_checks_main(argc, argv, checks, sizeof(checks) / sizeof(checks[0]));
}
