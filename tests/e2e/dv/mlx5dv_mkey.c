/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Indirect mkeys (mlx5dv_create_mkey) laid out by UMR work requests of
 * QPs made with mlx5dv_create_qp's mkey send ops: mlx5dv_wr_mr_list,
 * mlx5dv_wr_mr_interleaved and mlx5dv_wr_mkey_configure with its
 * setters. Data of a peer's WRITE and READ through the rkey, and of local
 * SEND, RECV, WRITE and READ SGEs through the lkey, lands exactly where
 * the layout says: every byte of the MRs under a key is compared with a
 * model of the layout, bytes outside it untouched. Access without the
 * right, past the key's length, after LOCAL_INV or SEND_WITH_INV, or
 * after an MR under it is gone is refused; signature and crypto are
 * refused as on a device without them.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <infiniband/mlx5dv.h>

#include "tests/e2e/harness/verbs_pair.h"

/* As few as rdma-core's mkey tests ask: mlx5 gives an RC QP every builder all the same. */
#define MKEY_SEND_OPS IBV_QP_EX_WITH_SEND
#define MLX5_MKEY_OPS                                                                     \
	(MLX5DV_QP_EX_WITH_MR_LIST | MLX5DV_QP_EX_WITH_MR_INTERLEAVED |                   \
	 MLX5DV_QP_EX_WITH_MKEY_CONFIGURE)
#define MR_BYTES 8192
#define MR_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)
#define KEY_ACCESS MR_ACCESS
#define MAX_PIECES 8

/* One entry of a layout: bytes from buf at off, the next repetition stride further. */
struct piece {
	struct buf *buf;
	size_t off;
	uint32_t bytes, skip;
};

struct layout {
	bool interleaved;
	uint32_t repeat;		/* 1 for a list */
	unsigned int num;
	struct piece p[MAX_PIECES];
};

static struct pair pair;
static struct ibv_qp_ex *qpx_a, *qpx_b;
static struct mlx5dv_qp_ex *mqp_a, *mqp_b;

static size_t layout_bytes(const struct layout *l)
{
	size_t block = 0;

	for (unsigned int i = 0; i < l->num; i++)
		block += l->p[i].bytes;
	return block * l->repeat;
}

/* An RC QP of d with every mkey send op, as mlx5dv_create_qp(3) makes one. */
static bool side_open_dv(struct side *s, struct dev *d)
{
	struct ibv_qp_init_attr_ex attr = {
		.qp_type = IBV_QPT_RC, .pd = d->pd,
		.cap = { .max_send_wr = 32, .max_recv_wr = 32, .max_send_sge = 4, .max_recv_sge = 4 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = MKEY_SEND_OPS,
	};
	struct mlx5dv_qp_init_attr dv = { .comp_mask = MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS,
					  .send_ops_flags = MLX5_MKEY_OPS };

	memset(s, 0, sizeof(*s));
	s->dev = d;
	s->send_cq = ibv_create_cq(d->ctx, CQ_DEPTH, NULL, NULL, 0);
	s->recv_cq = ibv_create_cq(d->ctx, CQ_DEPTH, NULL, NULL, 0);
	if (!s->send_cq || !s->recv_cq) {
		check(false, "%s: ibv_create_cq: %s", d->name, strerror(errno));
		return false;
	}
	attr.send_cq = s->send_cq;
	attr.recv_cq = s->recv_cq;
	s->qp = mlx5dv_create_qp(d->ctx, &attr, &dv);
	if (!s->qp) {
		check(false, "%s: mlx5dv_create_qp with the mkey send ops: %s", d->name,
		      strerror(errno));
		return false;
	}
	s->cap = attr.cap;
	s->qp_ex = true;
	return true;
}

/* A connected pair of such QPs, a requester on dev_a and a responder on dev_b. */
static bool pair_open_dv(void)
{
	struct qp_knobs k = QP_KNOBS_DEFAULT;
	int ret;

	memset(&pair, 0, sizeof(pair));
	if (!side_open_dv(&pair.a, &dev_a) || !side_open_dv(&pair.b, &dev_b))
		return false;
	ret = qp_connect(pair.a.qp, pair.b.qp->qp_num, &dev_b.gid, PSN_A, PSN_B, &k);
	if (!ret)
		ret = qp_connect(pair.b.qp, pair.a.qp->qp_num, &dev_a.gid, PSN_B, PSN_A, &k);
	if (ret) {
		check(false, "connecting the pair: %s", strerror(ret));
		return false;
	}
	qpx_a = ibv_qp_to_qp_ex(pair.a.qp);
	qpx_b = ibv_qp_to_qp_ex(pair.b.qp);
	mqp_a = mlx5dv_qp_ex_from_ibv_qp_ex(qpx_a);
	mqp_b = mlx5dv_qp_ex_from_ibv_qp_ex(qpx_b);
	check(mqp_a && mqp_b && mqp_a->wr_mr_list && mqp_a->wr_mkey_configure,
	      "mlx5dv_qp_ex_from_ibv_qp_ex: the mkey builders");
	return mqp_a && mqp_b;
}

static void pair_done(void)
{
	pair_close(&pair);
	bufs_free();
}

static struct mlx5dv_mkey *mkey_new(struct dev *d, uint16_t entries, uint32_t flags)
{
	struct mlx5dv_mkey_init_attr attr = { .pd = d->pd, .create_flags = flags,
					      .max_entries = entries };
	struct mlx5dv_mkey *m = mlx5dv_create_mkey(&attr);

	check(m && attr.max_entries >= entries, "%s: mlx5dv_create_mkey of %u entries: %s",
	      d->name, entries, m ? "made" : strerror(errno));
	return m;
}

/* Post the layout l on mkey through qpx/mqp (mlx5dv_wr_mr_list or _interleaved); wr_complete's value. */
static int umr_post(struct ibv_qp_ex *qpx, struct mlx5dv_qp_ex *mqp, struct mlx5dv_mkey *mkey,
		    uint32_t access, const struct layout *l, uint64_t wr_id)
{
	struct mlx5dv_mr_interleaved data[MAX_PIECES];
	struct ibv_sge sge[MAX_PIECES];

	for (unsigned int i = 0; i < l->num; i++) {
		data[i] = (struct mlx5dv_mr_interleaved){
			.addr = raddr_of(l->p[i].buf, l->p[i].off), .bytes_count = l->p[i].bytes,
			.bytes_skip = l->p[i].skip, .lkey = l->p[i].buf->mr->lkey };
		sge[i] = sge_of(l->p[i].buf, l->p[i].off, l->p[i].bytes);
	}
	ibv_wr_start(qpx);
	qpx->wr_id = wr_id;
	qpx->wr_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
	if (l->interleaved)
		mlx5dv_wr_mr_interleaved(mqp, mkey, access, l->repeat, (uint16_t)l->num, data);
	else
		mlx5dv_wr_mr_list(mqp, mkey, access, (uint16_t)l->num, sge);
	return ibv_wr_complete(qpx);
}

/* Lay l out on mkey from side s and see the UMR complete as MLX5DV_WC_UMR. */
static bool umr(struct side *s, struct mlx5dv_mkey *mkey, uint32_t access, const struct layout *l,
		const char *what)
{
	bool a = s == &pair.a;
	int ret = umr_post(a ? qpx_a : qpx_b, a ? mqp_a : mqp_b, mkey, access, l, 0x700);

	check(ret == 0, "%s: posted (%s)", what, strerror(ret));
	return ret == 0 && expect_wc(s->send_cq, what,
				     (struct want){ 0x700, IBV_WC_SUCCESS, MLX5DV_WC_UMR, -1 },
				     NULL);
}

/*
 * Every byte of every MR under l: bytes [from, from + len) of the key hold
 * message seed from offset from, everything else the fill it had.
 */
static void check_layout(const struct layout *l, size_t from, size_t len, unsigned int seed,
			 uint8_t fill, const char *what)
{
	static uint8_t model[MAX_PIECES][MR_BYTES];
	struct buf *bufs[MAX_PIECES];
	unsigned int nbufs = 0, i, j;
	size_t key_off = 0, bad = 0;

	for (i = 0; i < l->num; i++) {
		for (j = 0; j < nbufs && bufs[j] != l->p[i].buf; j++)
			;
		if (j == nbufs) {
			bufs[nbufs] = l->p[i].buf;
			memset(model[nbufs++], fill, MR_BYTES);
		}
	}
	for (uint32_t r = 0; r < l->repeat; r++) {
		for (i = 0; i < l->num; i++) {
			const struct piece *p = &l->p[i];

			for (j = 0; bufs[j] != p->buf; j++)
				;
			for (uint32_t b = 0; b < p->bytes; b++, key_off++)
				if (key_off >= from && key_off < from + len)
					model[j][p->off + (size_t)r * (p->bytes + p->skip) + b] =
						pattern_byte(seed, key_off);
		}
	}
	for (j = 0; j < nbufs; j++)
		for (size_t b = 0; b < MR_BYTES; b++)
			bad += bufs[j]->p[b] != model[j][b];
	check(!bad, "%s: every byte of %u MRs where the layout says (%zu wrong)", what, nbufs, bad);
}

/* Every MR under l filled with fill again. */
static void layout_reset(const struct layout *l, uint8_t fill)
{
	for (unsigned int i = 0; i < l->num; i++)
		memset(l->p[i].buf->p, fill, MR_BYTES);
}

static struct buf *mr_buf(struct dev *d, uint8_t fill)
{
	return buf_new(d, MR_BYTES, MR_BYTES, MR_ACCESS, fill);
}

/* A WRITE or READ of len bytes between local lkey/addr and remote rkey/raddr; its completion status. */
static enum ibv_wc_status rdma(enum ibv_wr_opcode op, uint32_t lkey, uint64_t addr, uint32_t len,
			       uint32_t rkey, uint64_t raddr, uint64_t wr_id)
{
	struct ibv_sge sge = { .addr = addr, .length = len, .lkey = lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED,
				  .wr = { .rdma = { .remote_addr = raddr, .rkey = rkey } } };
	struct ibv_wc wc = { .status = IBV_WC_GENERAL_ERR };

	if (!post_send(pair.a.qp, &wr, op == IBV_WR_RDMA_WRITE ? "WRITE" : "READ") ||
	    wait_wc(pair.a.send_cq, &wc) <= 0)
		return IBV_WC_GENERAL_ERR;
	return wc.status;
}

/* Remote WRITE and READ through b's key laid out as l, then local SEND/RECV, WRITE and READ through a's. */
static void check_key(struct layout *lb, struct layout *la, const char *what)
{
	size_t len = layout_bytes(lb), la_len = layout_bytes(la);
	struct buf *src = buf_new(&dev_a, len, len, MR_ACCESS, 0);
	struct buf *dst = buf_new(&dev_a, len, len, MR_ACCESS, UNTOUCHED);
	struct buf *plain_b = buf_new(&dev_b, len, len, MR_ACCESS, UNTOUCHED);
	struct mlx5dv_mkey *kb = mkey_new(&dev_b, (uint16_t)(lb->num + 1), MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT);
	struct mlx5dv_mkey *ka = mkey_new(&dev_a, (uint16_t)(la->num + 1), MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT);
	struct ibv_recv_wr rwr = { .wr_id = 0x900, .num_sge = 1 };
	struct ibv_send_wr swr = { .wr_id = 0x901, .num_sge = 1, .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED };
	struct ibv_sge rsge, ssge;
	char name[160];

	if (!src || !dst || !plain_b || !kb || !ka || !umr(&pair.b, kb, KEY_ACCESS, lb, "UMR of b's key") ||
	    !umr(&pair.a, ka, KEY_ACCESS, la, "UMR of a's key"))
		goto out;
	fill_pattern(src->p, len, 1, 0);
	snprintf(name, sizeof(name), "%s: remote WRITE of %zu bytes through the rkey", what, len);
	check(rdma(IBV_WR_RDMA_WRITE, src->mr->lkey, raddr_of(src, 0), (uint32_t)len, kb->rkey, 0,
		   1) == IBV_WC_SUCCESS, "%s: completes", name);
	check_layout(lb, 0, len, 1, UNTOUCHED, name);
	snprintf(name, sizeof(name), "%s: remote READ of %zu bytes through the rkey", what, len);
	check(rdma(IBV_WR_RDMA_READ, dst->mr->lkey, raddr_of(dst, 0), (uint32_t)len, kb->rkey, 0,
		   2) == IBV_WC_SUCCESS, "%s: completes", name);
	check(pattern_mismatch(dst->p, len, 1, 0) == len, "%s: every byte as written", name);
	memset(dst->p, UNTOUCHED, len);
	check(rdma(IBV_WR_RDMA_READ, dst->mr->lkey, raddr_of(dst, 0), (uint32_t)(len / 2),
		   kb->rkey, len / 3, 3) == IBV_WC_SUCCESS &&
	      pattern_mismatch(dst->p, len / 2, 1, len / 3) == len / 2 &&
	      all_bytes(dst->p + len / 2, len - len / 2, UNTOUCHED),
	      "%s: a READ from offset %zu across entries", what, len / 3);

	/* a's key as an lkey: a READ scatters and a SEND gathers through it, b's scatters the RECV. */
	fill_pattern(plain_b->p, len, 2, 0);
	ssge = (struct ibv_sge){ .addr = 0, .length = (uint32_t)la_len, .lkey = ka->lkey };
	check(rdma(IBV_WR_RDMA_READ, ka->lkey, 0, (uint32_t)la_len, plain_b->mr->rkey,
		   raddr_of(plain_b, 0), 5) == IBV_WC_SUCCESS,
	      "%s: a READ response scattered through the local key", what);
	check_layout(la, 0, la_len, 2, UNTOUCHED, "local key after the READ");
	layout_reset(lb, UNTOUCHED);
	rsge = (struct ibv_sge){ .addr = 0, .length = (uint32_t)len, .lkey = kb->lkey };
	rwr.sg_list = &rsge;
	swr.sg_list = &ssge;
	if (post_recv(pair.b.qp, &rwr, "RECV through b's key") &&
	    post_send(pair.a.qp, &swr, "SEND through a's key")) {
		expect_wc(pair.a.send_cq, "SEND gathered through the local key",
			  (struct want){ 0x901, IBV_WC_SUCCESS, IBV_WC_SEND, -1 }, NULL);
		expect_wc(pair.b.recv_cq, "RECV scattered through the local key",
			  (struct want){ 0x900, IBV_WC_SUCCESS, IBV_WC_RECV, (long)la_len }, NULL);
		check_layout(lb, 0, la_len, 2, UNTOUCHED, "b's key after the RECV");
	}
	/* A WRITE gathering through a's key into plain memory of b. */
	memset(plain_b->p, UNTOUCHED, len);
	check(rdma(IBV_WR_RDMA_WRITE, ka->lkey, 0, (uint32_t)la_len, plain_b->mr->rkey,
		   raddr_of(plain_b, 0), 6) == IBV_WC_SUCCESS &&
	      pattern_mismatch(plain_b->p, la_len, 2, 0) == la_len &&
	      all_bytes(plain_b->p + la_len, len - la_len, UNTOUCHED),
	      "%s: a WRITE gathered through the local key", what);
out:
	if (kb)
		check(mlx5dv_destroy_mkey(kb) == 0, "mlx5dv_destroy_mkey of b's key");
	if (ka)
		check(mlx5dv_destroy_mkey(ka) == 0, "mlx5dv_destroy_mkey of a's key");
}

/* A fresh pair, nb MRs on b and na on a (b[], a[]), all of MR_BYTES filled UNTOUCHED. */
static bool pair_with_mrs(struct buf **b, unsigned int nb, struct buf **a, unsigned int na)
{
	unsigned int i;

	if (!pair_open_dv())
		return false;
	for (i = 0; i < nb; i++)
		if (!(b[i] = mr_buf(&dev_b, UNTOUCHED)))
			return false;
	for (i = 0; i < na; i++)
		if (!(a[i] = mr_buf(&dev_a, UNTOUCHED)))
			return false;
	return true;
}

/* b's indirect key (created with flags) laid out as l with access, or NULL. */
static struct mlx5dv_mkey *key_b(const struct layout *l, uint32_t access, uint32_t flags)
{
	struct mlx5dv_mkey *k = mkey_new(&dev_b, (uint16_t)(l->num + 1),
					 MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT | flags);

	if (k && !umr(&pair.b, k, access, l, "UMR of b's key")) {
		mlx5dv_destroy_mkey(k);
		return NULL;
	}
	return k;
}

static void check_mr_list(void)
{
	struct buf *b[2], *a[2];
	struct layout lb, la;

	if (pair_with_mrs(b, 2, a, 2)) {
		/* Three packets of 1024 bytes over three entries of two MRs, out of order. */
		lb = (struct layout){ .repeat = 1, .num = 3,
				      .p = { { b[0], 100, 1100, 0 }, { b[1], 1000, 1500, 0 },
					     { b[0], 4000, 400, 0 } } };
		la = (struct layout){ .repeat = 1, .num = 4,
				      .p = { { a[0], 7, 33, 0 }, { a[1], 64, 2000, 0 },
					     { a[0], 5000, 1, 0 }, { a[1], 6000, 966, 0 } } };
		check_key(&lb, &la, "MR_LIST");
	}
	pair_done();
}

static void check_mr_interleaved(void)
{
	struct buf *b[2], *a[2];
	struct layout lb, la;

	if (pair_with_mrs(b, 2, a, 2)) {
		/* The man page's example, repeated 5 times: 512 + 8 bytes a block, 4 skipped after 512. */
		lb = (struct layout){ .interleaved = true, .repeat = 5, .num = 2,
				      .p = { { b[0], 0, 512, 4 }, { b[1], 0, 8, 0 } } };
		la = (struct layout){ .interleaved = true, .repeat = 7, .num = 3,
				      .p = { { a[0], 3, 100, 28 }, { a[1], 10, 1, 9 },
					     { a[0], 4096, 200, 0 } } };
		check_key(&lb, &la, "MR_INTERLEAVED");
	}
	pair_done();
}

/* A remote WRITE through b's key that must be refused, leaving every MR under it as it was. */
static void expect_refused(struct mlx5dv_mkey *kb, const struct layout *lb, size_t raddr,
			   size_t len, const char *what)
{
	struct buf *src = buf_new(&dev_a, len, len, MR_ACCESS, 0);

	if (!src)
		return;
	fill_pattern(src->p, len, 9, 0);
	check(rdma(IBV_WR_RDMA_WRITE, src->mr->lkey, raddr_of(src, 0), (uint32_t)len, kb->rkey,
		   raddr, 7) == IBV_WC_REM_ACCESS_ERR, "%s: remote access error", what);
	check_layout(lb, 0, 0, 9, UNTOUCHED, what);
}

/* A WRITE of len at raddr through a key of two 100-byte entries, with access, must be refused. */
static void refused_on_two_entries(uint32_t access, size_t raddr, size_t len, bool dereg,
				   const char *what)
{
	struct mlx5dv_mkey *kb;
	struct buf *b[2];
	struct layout lb;

	if (pair_with_mrs(b, 2, NULL, 0)) {
		lb = (struct layout){ .repeat = 1, .num = 2,
				      .p = { { b[0], 0, 100, 0 }, { b[1], 1000, 100, 0 } } };
		kb = key_b(&lb, access, 0);
		if (kb) {
			if (dereg) {
				check(ibv_dereg_mr(b[1]->mr) == 0, "dereg the second MR under the key");
				b[1]->mr = NULL;
			}
			expect_refused(kb, &lb, raddr, len, what);
			mlx5dv_destroy_mkey(kb);
		}
	}
	pair_done();
}

static void check_access_refused(void)
{
	refused_on_two_entries(IBV_ACCESS_REMOTE_READ | IBV_ACCESS_LOCAL_WRITE, 0, 200, false,
			       "WRITE through a key without remote write");
}

static void check_bounds(void)
{
	refused_on_two_entries(KEY_ACCESS, 150, 51, false, "WRITE one byte past the key's end");
}

/* An MR deregistered under a laid-out key: nothing reaches where it was. */
static void check_mr_gone(void)
{
	refused_on_two_entries(KEY_ACCESS, 50, 100, true, "WRITE reaching a deregistered MR");
}

/* LOCAL_INV through b's QP frees the key: what worked before is refused after. */
static void check_local_inv(void)
{
	struct ibv_send_wr inv = { .wr_id = 0x800, .opcode = IBV_WR_LOCAL_INV,
				   .send_flags = IBV_SEND_SIGNALED };
	struct mlx5dv_mkey *kb = NULL;
	struct buf *b[1], *src;
	struct layout lb;

	if (!pair_with_mrs(b, 1, NULL, 0) || !(src = buf_new(&dev_a, 64, 64, MR_ACCESS, 0)))
		goto out;
	lb = (struct layout){ .repeat = 1, .num = 1, .p = { { b[0], 64, 64, 0 } } };
	kb = key_b(&lb, KEY_ACCESS, 0);
	if (!kb)
		goto out;
	fill_pattern(src->p, 64, 3, 0);
	check(rdma(IBV_WR_RDMA_WRITE, src->mr->lkey, raddr_of(src, 0), 64, kb->rkey, 0, 8) ==
	      IBV_WC_SUCCESS, "WRITE before LOCAL_INV: completes");
	check_layout(&lb, 0, 64, 3, UNTOUCHED, "WRITE before LOCAL_INV");
	inv.invalidate_rkey = kb->rkey;
	if (post_send(pair.b.qp, &inv, "LOCAL_INV of the key"))
		expect_wc(pair.b.send_cq, "LOCAL_INV of the key",
			  (struct want){ 0x800, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV, -1 }, NULL);
	fill_pattern(src->p, 64, 4, 0);
	check(rdma(IBV_WR_RDMA_WRITE, src->mr->lkey, raddr_of(src, 0), 64, kb->rkey, 0, 9) ==
	      IBV_WC_REM_ACCESS_ERR, "WRITE after LOCAL_INV: remote access error");
	check_layout(&lb, 0, 64, 3, UNTOUCHED, "WRITE after LOCAL_INV");
out:
	if (kb)
		mlx5dv_destroy_mkey(kb);
	pair_done();
}

/* a's SEND_WITH_INV of rkey with ssge, by ibv_wr_send_inv: a QP asking SEND only has that builder too. */
static bool send_inv_wr(uint32_t rkey, const struct ibv_sge *ssge)
{
	int ret;

	check(qpx_a->wr_send_inv != NULL, "ibv_qp_ex of a QP asking SEND only: wr_send_inv is set");
	if (!qpx_a->wr_send_inv)
		return false;
	ibv_wr_start(qpx_a);
	qpx_a->wr_id = 0x911;
	qpx_a->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send_inv(qpx_a, rkey);
	ibv_wr_set_sge(qpx_a, ssge->lkey, ssge->addr, ssge->length);
	ret = ibv_wr_complete(qpx_a);
	check(ret == 0, "ibv_wr_complete of SEND_WITH_INV: %s", strerror(ret));
	return ret == 0;
}

/* SEND_WITH_INV of b's key: taken for a key made with REMOTE_INVALIDATE (posted by the wr API), refused otherwise. */
static void send_inv(bool allowed)
{
	struct mlx5dv_mkey *kb = NULL;
	struct buf *b[1], *rbuf, *src;
	struct layout lb;
	struct ibv_sge rsge, ssge;
	struct ibv_recv_wr rwr = { .wr_id = 0x910, .sg_list = &rsge, .num_sge = 1 };
	struct ibv_send_wr swr = { .wr_id = 0x911, .sg_list = &ssge, .num_sge = 1,
				   .opcode = IBV_WR_SEND_WITH_INV, .send_flags = IBV_SEND_SIGNALED };
	struct ibv_wc wc;

	if (!pair_with_mrs(b, 1, NULL, 0) || !(rbuf = buf_new(&dev_b, 64, 64, MR_ACCESS, 0)) ||
	    !(src = buf_new(&dev_a, 64, 64, MR_ACCESS, 0)))
		goto out;
	lb = (struct layout){ .repeat = 1, .num = 1, .p = { { b[0], 0, 64, 0 } } };
	kb = key_b(&lb, KEY_ACCESS, allowed ? MLX5DV_MKEY_INIT_ATTR_FLAGS_REMOTE_INVALIDATE : 0);
	if (!kb)
		goto out;
	rsge = sge_of(rbuf, 0, 64);
	ssge = sge_of(src, 0, 16);
	swr.invalidate_rkey = kb->rkey;
	if (!post_recv(pair.b.qp, &rwr, "RECV") ||
	    !(allowed ? send_inv_wr(kb->rkey, &ssge) : post_send(pair.a.qp, &swr, "SEND_WITH_INV")))
		goto out;
	if (allowed) {
		expect_wc(pair.b.recv_cq, "SEND_WITH_INV of a key made with REMOTE_INVALIDATE",
			  (struct want){ 0x910, IBV_WC_SUCCESS, IBV_WC_RECV, 16 }, &wc);
		check((wc.wc_flags & IBV_WC_WITH_INV) && wc.invalidated_rkey == kb->rkey,
		      "the receive names the invalidated key");
		expect_wc(pair.a.send_cq, "SEND_WITH_INV",
			  (struct want){ 0x911, IBV_WC_SUCCESS, IBV_WC_SEND, -1 }, NULL);
		expect_refused(kb, &lb, 0, 64, "WRITE after SEND_WITH_INV");
	} else {
		expect_wc(pair.a.send_cq, "SEND_WITH_INV of a key made without REMOTE_INVALIDATE",
			  (struct want){ 0x911, IBV_WC_REM_INV_REQ_ERR, -1, -1 }, NULL);
	}
out:
	if (kb)
		mlx5dv_destroy_mkey(kb);
	pair_done();
}

static void check_send_inv(void)
{
	send_inv(true);
	send_inv(false);
}

/* A batch on b's QP that starts with mlx5dv_wr_mkey_configure of kb; the caller's setters follow. */
static void configure_begin(struct mlx5dv_mkey *kb, unsigned int wr_flags, uint8_t num_setters)
{
	struct mlx5dv_mkey_conf_attr conf = { 0 };

	ibv_wr_start(qpx_b);
	qpx_b->wr_id = 0x700;
	qpx_b->wr_flags = wr_flags;
	mlx5dv_wr_mkey_configure(mqp_b, kb, num_setters, &conf);
}

/* The batch's ibv_wr_complete must give want. */
static void configure_end(int want, const char *what)
{
	int ret = ibv_wr_complete(qpx_b);

	check(ret == want, "%s: %s (%s)", what, want ? strerror(want) : "posted", strerror(ret));
}

/* mlx5dv_wr_mkey_configure with its setters, and their errors as libmlx5 gives them. */
static void check_mkey_configure(void)
{
	struct mlx5dv_mkey *kb = NULL;
	struct buf *b[2], *src;
	struct ibv_sge sge[5];
	struct mlx5dv_mr_interleaved data;
	struct layout lb, li;

	if (!pair_with_mrs(b, 2, NULL, 0) || !(src = buf_new(&dev_a, 1600, 1600, MR_ACCESS, 0)) ||
	    !(kb = mkey_new(&dev_b, 2, MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT)))
		goto out;
	lb = (struct layout){ .repeat = 1, .num = 2,
			      .p = { { b[0], 64, 1000, 0 }, { b[1], 5, 600, 0 } } };
	sge[0] = sge[2] = sge[4] = sge_of(b[0], 64, 1000);
	sge[1] = sge[3] = sge_of(b[1], 5, 600);
	configure_begin(kb, IBV_SEND_INLINE | IBV_SEND_SIGNALED, 2);
	mlx5dv_wr_set_mkey_access_flags(mqp_b, KEY_ACCESS);
	mlx5dv_wr_set_mkey_layout_list(mqp_b, 2, sge);
	configure_end(0, "mkey_configure, access flags, layout list");
	if (expect_wc(pair.b.send_cq, "mkey_configure",
		      (struct want){ 0x700, IBV_WC_SUCCESS, IBV_WC_DRIVER1, -1 }, NULL)) {
		fill_pattern(src->p, 1600, 5, 0);
		check(rdma(IBV_WR_RDMA_WRITE, src->mr->lkey, raddr_of(src, 0), 1600, kb->rkey, 0,
			   10) == IBV_WC_SUCCESS, "WRITE through the list key: completes");
		check_layout(&lb, 0, 1600, 5, UNTOUCHED, "WRITE through the list key");
	}
	/* Laid out anew over the same key, the access kept: 3 x (100 bytes, 50 skipped). */
	li = (struct layout){ .interleaved = true, .repeat = 3, .num = 1,
			      .p = { { b[1], 2000, 100, 50 } } };
	data = (struct mlx5dv_mr_interleaved){ .addr = raddr_of(b[1], 2000), .bytes_count = 100,
					       .bytes_skip = 50, .lkey = b[1]->mr->lkey };
	layout_reset(&lb, UNTOUCHED);
	configure_begin(kb, IBV_SEND_INLINE | IBV_SEND_SIGNALED, 1);
	mlx5dv_wr_set_mkey_layout_interleaved(mqp_b, 3, 1, &data);
	configure_end(0, "mkey_configure, layout interleaved");
	if (expect_wc(pair.b.send_cq, "mkey_configure again",
		      (struct want){ 0x700, IBV_WC_SUCCESS, IBV_WC_DRIVER1, -1 }, NULL)) {
		check(rdma(IBV_WR_RDMA_WRITE, src->mr->lkey, raddr_of(src, 0), 300, kb->rkey, 0,
			   11) == IBV_WC_SUCCESS, "WRITE through the key laid out anew: completes");
		check_layout(&li, 0, 300, 5, UNTOUCHED, "WRITE through the key laid out anew");
		check_untouched(b[0]->p, MR_BYTES, UNTOUCHED, "the MR of the old layout only");
	}

	/* The builder's and setters' errors fail the batch, as mlx5's mqp->err. */
	configure_begin(kb, IBV_SEND_SIGNALED, 0);
	configure_end(EOPNOTSUPP, "mkey_configure without IBV_SEND_INLINE");
	configure_begin(kb, IBV_SEND_INLINE, 2);
	mlx5dv_wr_set_mkey_access_flags(mqp_b, KEY_ACCESS);
	mlx5dv_wr_set_mkey_access_flags(mqp_b, KEY_ACCESS);
	configure_end(EINVAL, "access flags set twice");
	configure_begin(kb, IBV_SEND_INLINE, 1);
	mlx5dv_wr_set_mkey_layout_list(mqp_b, 5, sge);
	configure_end(ENOMEM, "a layout of more entries than the key has");
	configure_begin(kb, IBV_SEND_INLINE, 2);
	configure_end(EINVAL, "setters missing");
	ibv_wr_start(qpx_b);
	mlx5dv_wr_set_mkey_access_flags(mqp_b, KEY_ACCESS);
	configure_end(EINVAL, "a setter without mkey_configure");
out:
	if (kb)
		mlx5dv_destroy_mkey(kb);
	pair_done();
}

/* Signature and crypto offloads: refused as by mlx5 on a device without them. */
static void check_offloads_refused(void)
{
	struct mlx5dv_mkey_init_attr attr = { .pd = dev_b.pd, .max_entries = 4 };
	struct mlx5dv_sig_block_attr sig = { 0 };
	struct mlx5dv_crypto_attr crypto = { 0 };
	struct mlx5dv_mkey *kb;

	attr.create_flags = MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT | MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE;
	errno = 0;
	check(!mlx5dv_create_mkey(&attr) && errno == EOPNOTSUPP,
	      "mlx5dv_create_mkey with BLOCK_SIGNATURE: NULL, EOPNOTSUPP");
	attr.create_flags = MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT | MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO;
	errno = 0;
	check(!mlx5dv_create_mkey(&attr) && errno == EOPNOTSUPP,
	      "mlx5dv_create_mkey with CRYPTO: NULL, EOPNOTSUPP");
	attr.create_flags = MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT;
	attr.max_entries = 17;
	errno = 0;
	check(!mlx5dv_create_mkey(&attr) && errno == EINVAL,
	      "mlx5dv_create_mkey of more entries than max_klm_list_size: NULL, EINVAL");
	if (pair_open_dv() && (kb = mkey_new(&dev_b, 4, MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT))) {
		check(mlx5dv_mkey_check(kb, &(struct mlx5dv_mkey_err){ 0 }) == EINVAL,
		      "mlx5dv_mkey_check of a key without signature: EINVAL");
		configure_begin(kb, IBV_SEND_INLINE, 1);
		mlx5dv_wr_set_mkey_sig_block(mqp_b, &sig);
		configure_end(EINVAL, "mlx5dv_wr_set_mkey_sig_block");
		configure_begin(kb, IBV_SEND_INLINE, 1);
		mlx5dv_wr_set_mkey_crypto(mqp_b, &crypto);
		configure_end(EINVAL, "mlx5dv_wr_set_mkey_crypto");
		check(mlx5dv_destroy_mkey(kb) == 0, "mlx5dv_destroy_mkey");
	}
	pair_done();
}

static const struct named_check checks[] = {
	{ "MR_LIST", check_mr_list },
	{ "MR_INTERLEAVED", check_mr_interleaved },
	{ "access without the right", check_access_refused },
	{ "past the key's end", check_bounds },
	{ "LOCAL_INV", check_local_inv },
	{ "SEND_WITH_INV", check_send_inv },
	{ "an MR gone under the key", check_mr_gone },
	{ "mkey_configure", check_mkey_configure },
	{ "signature and crypto", check_offloads_refused },
};

int main(int argc, char **argv)
{
	return run_checks_main(argc, argv, checks, sizeof(checks) / sizeof(checks[0]));
}
