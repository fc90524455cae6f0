/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Indirect mkeys of an emulated device (mlx5dv_create_mkey) and the mlx5
 * send ops that lay them out: mlx5dv_wr_mr_list, mlx5dv_wr_mr_interleaved,
 * mlx5dv_wr_mkey_configure with the access and layout setters. Each
 * builds the UMR WQE libmlx5 builds (providers/mlx5/qp.c): ctrl with
 * opcode UMR and the mkey in imm, UMR control segment, mkey context and
 * the inline translation (a KLM list or a repeat block), and checks its
 * arguments as libmlx5 does, failing the batch with the same errno.
 * Signature and crypto are offloads this device lacks: mkeys are created
 * without them (EOPNOTSUPP), so their setters fail with EINVAL as on an
 * mkey created without them.
 */
#include "lib/shim.h"
#include "lib/dv/dv.h"

#include <stdlib.h>
#include <string.h>

#define KLM_BYTES 16
#define UMR_HEAD_BYTES (sizeof(struct mlx5_wqe_umr_ctrl_seg) + \
			sizeof(struct mlx5_wqe_mkey_context_seg))
#define UMR_ACCESS_MASK                                                                \
	((uint64_t)(MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_LOCAL_WRITE |                  \
		    MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_REMOTE_READ |                  \
		    MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_REMOTE_WRITE |                 \
		    MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_ATOMIC))
#define UMR_ACCESS_FLAGS                                                              \
	((uint32_t)(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |               \
		    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC))
/* The largest WQE ds can describe, less the ctrl and UMR heads: room for a translation. */
#define UMR_XLAT_MAX (ROCEMU_WQE_DS_MASK * ROCEMU_WQE_SEG - ROCEMU_WQE_SEG - UMR_HEAD_BYTES)

struct rocemu_mkey {
	struct mlx5dv_mkey dv;
	struct ibv_context *context;
	uint32_t handle;
	uint32_t max_entries;
	struct rocemu_mkey *next;	/* in the list of the shim's mkeys */
};

/* The UMR WQE after its ctrl segment, as built for the setters to fill. */
struct umr_segs {
	struct mlx5_wqe_umr_ctrl_seg ctrl;
	struct mlx5_wqe_mkey_context_seg mkc;
	uint8_t xlat[UMR_XLAT_MAX];
};

/* The UMR WQE a QP's builder started (under sq.lock, between wr_start and wr_complete). */
struct rocemu_umr_builder {
	struct rocemu_mkey *mkey;	/* of the WQE being built; NULL: none */
	uint64_t wr_id;
	unsigned int flags;
	uint8_t setters_left;
	size_t xlat_bytes;		/* of segs.xlat, padded to 64 bytes */
	struct umr_segs segs;
};

/* mlx5dv_destroy_mkey gets a bare pointer: the shim's mkeys are known by this list. */
static struct rocemu_mkey *mkeys;
static pthread_mutex_t mkeys_lock = PTHREAD_MUTEX_INITIALIZER;

static struct rocemu_mkey *mkey_find(const struct mlx5dv_mkey *dv, bool unlink)
{
	struct rocemu_mkey **p, *m = NULL;

	pthread_mutex_lock(&mkeys_lock);
	for (p = &mkeys; *p; p = &(*p)->next) {
		if (&(*p)->dv == dv) {
			m = *p;
			if (unlink)
				*p = m->next;
			break;
		}
	}
	pthread_mutex_unlock(&mkeys_lock);
	return m;
}

struct mlx5dv_mkey *mlx5dv_create_mkey(struct mlx5dv_mkey_init_attr *mkey_init_attr)
{
	struct rocemu_create_mkey_req req;
	struct rocemu_create_mkey_resp resp;
	struct ibv_pd *pd = mkey_init_attr->pd;
	struct rocemu_mkey *m;
	int err;

	if (!rocemu_pd_is_ours(pd))
		return REAL(mlx5dv_create_mkey)(mkey_init_attr);
	if (!rocemu_dv_plays(pd->context->device, ROCEMU_MODEL_CX5))
		return dv_refuse();
	m = calloc(1, sizeof(*m));
	if (!m)
		return dv_fail(ENOMEM);
	req = (struct rocemu_create_mkey_req){ .pdn = to_rpd(pd)->pdn,
					       .create_flags = mkey_init_attr->create_flags,
					       .max_entries = mkey_init_attr->max_entries };
	err = rocemu_conn_call(&to_rctx(pd->context)->conn, ROCEMU_OP_CREATE_MKEY, &req, &resp,
			       NULL, 0);
	if (err) {
		free(m);
		return dv_fail(-err);
	}
	m->dv.lkey = m->dv.rkey = resp.key;
	m->context = pd->context;
	m->handle = resp.handle;
	m->max_entries = resp.max_entries;
	mkey_init_attr->max_entries = (uint16_t)resp.max_entries;
	pthread_mutex_lock(&mkeys_lock);
	m->next = mkeys;
	mkeys = m;
	pthread_mutex_unlock(&mkeys_lock);
	return &m->dv;
}

int mlx5dv_destroy_mkey(struct mlx5dv_mkey *mkey)
{
	struct rocemu_mkey *m = mkey_find(mkey, true);
	struct rocemu_handle_req req;
	int err;

	if (!m)
		return REAL(mlx5dv_destroy_mkey)(mkey);
	req = (struct rocemu_handle_req){ .handle = m->handle };
	err = rocemu_conn_call(&to_rctx(m->context)->conn, ROCEMU_OP_DESTROY_MKEY, &req, NULL,
			       NULL, 0);
	free(m);
	return rocemu_errno_value(err);
}

/* No signature context on an emulated mkey: mlx5's answer for an mkey without one. */
int _mlx5dv_mkey_check(struct mlx5dv_mkey *mkey, struct mlx5dv_mkey_err *err_info,
		       size_t err_info_size)
{
	if (mkey_find(mkey, false))
		return EINVAL;
	return REAL(_mlx5dv_mkey_check)(mkey, err_info, err_info_size);
}

struct mlx5dv_qp_ex *mlx5dv_qp_ex_from_ibv_qp_ex(struct ibv_qp_ex *qp)
{
	if (qp && rocemu_ctx_is_ours(qp->qp_base.context))
		return rocemu_dv_plays(qp->qp_base.context->device, ROCEMU_MODEL_CX5)
			       ? &to_rqp_ex(qp)->dv_qpx
			       : dv_refuse();
	return REAL(mlx5dv_qp_ex_from_ibv_qp_ex)(qp);
}

static struct rocemu_qp *to_rqp_dv(struct mlx5dv_qp_ex *mqp)
{
	return container_of(mqp, struct rocemu_qp, dv_qpx);
}

/* Entries the QP's largest WQE carries after the UMR heads (the provider's max_inline_data bound). */
static uint32_t umr_fit(const struct rocemu_qp *qp)
{
	size_t room = (size_t)qp->sq.max_wqe_bbs * ROCEMU_WQE_BB;

	return room > sizeof(struct mlx5_wqe_ctrl_seg) + UMR_HEAD_BYTES
		       ? (uint32_t)((room - sizeof(struct mlx5_wqe_ctrl_seg) - UMR_HEAD_BYTES) /
				    KLM_BYTES)
		       : 0;
}

static void umr_finalize(struct rocemu_qp *qp)
{
	struct rocemu_umr_builder *b = qp->umr;
	int err;

	err = rocemu_sq_write_segs(qp, MLX5_OPCODE_UMR, MLX5_WQE_CTRL_INITIATOR_SMALL_FENCE,
				   htobe32(b->mkey->dv.lkey), &b->segs,
				   UMR_HEAD_BYTES + b->xlat_bytes, b->wr_id, b->flags,
				   IBV_WR_DRIVER1);
	if (err)
		rocemu_sq_batch_fail(&qp->sq, err);
	b->mkey = NULL;
	qp->sq.wr_pending = false;
}

/* One setter more of the WQE being built; the last one writes it. */
static void umr_setter_done(struct rocemu_qp *qp)
{
	if (!--qp->umr->setters_left)
		umr_finalize(qp);
}

/* A setter may run: this batch builds a UMR WQE and has not failed (mlx5's mqp->err). */
static struct rocemu_umr_builder *umr_setter(struct rocemu_qp *qp)
{
	if (qp->sq.batch_err)
		return NULL;
	if (!qp->umr->mkey || !qp->sq.wr_pending || qp->sq.pending.opcode != IBV_WR_DRIVER1) {
		rocemu_sq_batch_fail(&qp->sq, EINVAL);
		return NULL;
	}
	return qp->umr;
}

static void wr_mkey_configure(struct mlx5dv_qp_ex *mqp, struct mlx5dv_mkey *dv_mkey,
			      uint8_t num_setters, struct mlx5dv_mkey_conf_attr *attr)
{
	struct rocemu_qp *qp = to_rqp_dv(mqp);
	struct rocemu_umr_builder *b = qp->umr;
	struct rocemu_mkey *m = mkey_find(dv_mkey, false);

	if (!(qp->qpx.wr_flags & IBV_SEND_INLINE) ||
	    (attr->conf_flags & ~(uint32_t)MLX5DV_MKEY_CONF_FLAG_RESET_SIG_ATTR) || attr->comp_mask) {
		rocemu_sq_batch_fail(&qp->sq, EOPNOTSUPP);
		return;
	}
	/* Another WQE still waiting for its setters, or an mkey of another device. */
	if (qp->sq.wr_pending || !m || m->context != qp->qpx.qp_base.context) {
		rocemu_sq_batch_fail(&qp->sq, EINVAL);
		return;
	}
	memset(&b->segs.ctrl, 0, sizeof(b->segs.ctrl));
	memset(&b->segs.mkc, 0, sizeof(b->segs.mkc));
	b->mkey = m;
	b->wr_id = qp->qpx.wr_id;
	b->flags = qp->qpx.wr_flags;
	b->xlat_bytes = 0;
	b->segs.ctrl.flags = MLX5_WQE_UMR_CTRL_FLAG_INLINE;
	b->segs.ctrl.mkey_mask = htobe64(MLX5_WQE_UMR_CTRL_MKEY_MASK_FREE |
					 MLX5_WQE_UMR_CTRL_MKEY_MASK_MKEY);
	b->segs.mkc.qpn_mkey = htobe32(0xffffff00 | (dv_mkey->lkey & 0xff));
	/* Until the last setter, a data setter or another builder is a malformed batch; the opcode marks whose. */
	qp->sq.wr_pending = true;
	qp->sq.pending.opcode = IBV_WR_DRIVER1;
	b->setters_left = num_setters;
	if (!num_setters)
		umr_finalize(qp);
}

static void wr_set_mkey_access_flags(struct mlx5dv_qp_ex *mqp, uint32_t access_flags)
{
	struct rocemu_qp *qp = to_rqp_dv(mqp);
	struct rocemu_umr_builder *b = umr_setter(qp);

	if (!b)
		return;
	if ((access_flags & ~UMR_ACCESS_FLAGS) ||
	    (b->segs.ctrl.mkey_mask & htobe64(UMR_ACCESS_MASK))) {
		rocemu_sq_batch_fail(&qp->sq, EINVAL);
		return;
	}
	b->segs.ctrl.mkey_mask |= htobe64(UMR_ACCESS_MASK);
	b->segs.mkc.access_flags =
		(access_flags & IBV_ACCESS_REMOTE_ATOMIC ? MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_ATOMIC : 0) |
		(access_flags & IBV_ACCESS_REMOTE_WRITE ? MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_REMOTE_WRITE : 0) |
		(access_flags & IBV_ACCESS_REMOTE_READ ? MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_REMOTE_READ : 0) |
		(access_flags & IBV_ACCESS_LOCAL_WRITE ? MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_LOCAL_WRITE : 0);
	umr_setter_done(qp);
}

/* The translation: a repeat block when data (interleaved), else a KLM list of sge. */
static void wr_set_mkey_layout(struct rocemu_qp *qp, uint32_t repeat_count, uint16_t num,
			       const struct mlx5dv_mr_interleaved *data, const struct ibv_sge *sge)
{
	struct rocemu_umr_builder *b = umr_setter(qp);
	uint32_t fit, xlat_entries, i;
	uint64_t block = 0, len;
	uint8_t *t;

	if (!b)
		return;
	fit = umr_fit(qp);
	/* One entry of an interleaved layout is its repeat block header. */
	fit = data ? (fit ? fit - 1 : 0) : fit;
	if (num > (fit < b->mkey->max_entries ? fit : b->mkey->max_entries)) {
		rocemu_sq_batch_fail(&qp->sq, ENOMEM);
		return;
	}
	if (b->segs.ctrl.klm_octowords) {
		rocemu_sq_batch_fail(&qp->sq, EINVAL);
		return;
	}
	t = b->segs.xlat;
	xlat_entries = num + (data ? 1 : 0);
	memset(t, 0, (xlat_entries + 3) / 4 * 4 * KLM_BYTES);
	if (data) {
		struct mlx5_wqe_umr_repeat_block_seg rb = { 0 };
		struct mlx5_wqe_umr_repeat_ent_seg ent;

		for (i = 0; i < num; i++) {
			ent.va = htobe64(data[i].addr);
			ent.byte_count = htobe16((uint16_t)data[i].bytes_count);
			ent.stride = htobe16((uint16_t)(data[i].bytes_count + data[i].bytes_skip));
			ent.memkey = htobe32(data[i].lkey);
			memcpy(t + (i + 1) * KLM_BYTES, &ent, sizeof(ent));
			block += data[i].bytes_count;
		}
		rb.op = htobe32(0x400);
		rb.num_ent = htobe16(num);
		rb.repeat_count = htobe32(repeat_count);
		rb.byte_count = htobe32((uint32_t)block);
		memcpy(t, &rb, sizeof(rb));
		len = block * repeat_count;
	} else {
		struct mlx5_wqe_data_seg d;

		for (i = 0; i < num; i++) {
			d.addr = htobe64(sge[i].addr);
			d.lkey = htobe32(sge[i].lkey);
			d.byte_count = htobe32(sge[i].length);
			memcpy(t + i * KLM_BYTES, &d, sizeof(d));
			block += sge[i].length;
		}
		len = block;
	}
	b->xlat_bytes = (xlat_entries + 3) / 4 * 4 * KLM_BYTES;
	b->segs.mkc.len = htobe64(len);
	b->segs.ctrl.mkey_mask |= htobe64(MLX5_WQE_UMR_CTRL_MKEY_MASK_LEN);
	b->segs.ctrl.klm_octowords = htobe16((uint16_t)(b->xlat_bytes / KLM_BYTES));
	umr_setter_done(qp);
}

static void wr_set_mkey_layout_list(struct mlx5dv_qp_ex *mqp, uint16_t num_sges,
				    const struct ibv_sge *sge)
{
	wr_set_mkey_layout(to_rqp_dv(mqp), 0, num_sges, NULL, sge);
}

static void wr_set_mkey_layout_interleaved(struct mlx5dv_qp_ex *mqp, uint32_t repeat_count,
					   uint16_t num_interleaved,
					   const struct mlx5dv_mr_interleaved *data)
{
	wr_set_mkey_layout(to_rqp_dv(mqp), repeat_count, num_interleaved, data, NULL);
}

static void wr_mr_list(struct mlx5dv_qp_ex *mqp, struct mlx5dv_mkey *mkey, uint32_t access_flags,
		       uint16_t num_sges, struct ibv_sge *sge)
{
	struct mlx5dv_mkey_conf_attr attr = { 0 };

	wr_mkey_configure(mqp, mkey, 2, &attr);
	wr_set_mkey_access_flags(mqp, access_flags);
	wr_set_mkey_layout_list(mqp, num_sges, sge);
}

static void wr_mr_interleaved(struct mlx5dv_qp_ex *mqp, struct mlx5dv_mkey *mkey,
			      uint32_t access_flags, uint32_t repeat_count, uint16_t num_interleaved,
			      struct mlx5dv_mr_interleaved *data)
{
	struct mlx5dv_mkey_conf_attr attr = { 0 };

	wr_mkey_configure(mqp, mkey, 2, &attr);
	wr_set_mkey_access_flags(mqp, access_flags);
	wr_set_mkey_layout_interleaved(mqp, repeat_count, num_interleaved, data);
}

/* The mkey has no signature context (none can be created here): EINVAL, as mlx5. */
static void wr_set_mkey_sig_block(struct mlx5dv_qp_ex *mqp,
				  const struct mlx5dv_sig_block_attr *attr)
{
	struct rocemu_qp *qp = to_rqp_dv(mqp);

	(void)attr;
	if (umr_setter(qp))
		rocemu_sq_batch_fail(&qp->sq, EINVAL);
}

/* Nor a crypto context: EINVAL, as mlx5. */
static void wr_set_mkey_crypto(struct mlx5dv_qp_ex *mqp, const struct mlx5dv_crypto_attr *attr)
{
	struct rocemu_qp *qp = to_rqp_dv(mqp);

	(void)attr;
	if (umr_setter(qp))
		rocemu_sq_batch_fail(&qp->sq, EINVAL);
}

/* Room in each WQE for the UMR heads and 4 KLMs, or those max_inline_data holds (as mlx5), up to an mkey's. */
static uint32_t umr_inline_want(uint32_t max_inline_data)
{
	uint32_t entries = (max_inline_data + 4) / KLM_BYTES;
	uint32_t bytes;

	entries = entries < 4 ? 4 : entries > ROCEMU_MKEY_MAX_ENTRIES ? ROCEMU_MKEY_MAX_ENTRIES
								      : (entries + 3) / 4 * 4;
	bytes = (uint32_t)(UMR_HEAD_BYTES + entries * KLM_BYTES);
	/* A WQE of ctrl, raddr and an inline segment of this many bytes holds those bytes. */
	uint32_t inl = bytes - sizeof(struct mlx5_wqe_raddr_seg) -
		       sizeof(struct mlx5_wqe_inl_data_seg);

	return inl > max_inline_data ? inl : max_inline_data;
}

struct ibv_qp *rocemu_dv_mkey_qp_create(struct ibv_context *context,
					struct ibv_qp_init_attr_ex *attr, uint32_t vendor_flags)
{
	struct ibv_qp_init_attr_ex a = *attr;
	struct rocemu_umr_builder *b = calloc(1, sizeof(*b));
	struct rocemu_qp *qp;
	struct ibv_qp *ibqp;

	/* mlx5 gives an RC QP every mkey op, whichever it asked for. */
	if (!b)
		return dv_fail(ENOMEM);
	/* mlx5 sets every builder of the QP type when only mlx5 send ops are asked. */
	if (!(a.comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)) {
		a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		a.send_ops_flags = ROCEMU_QP_SEND_OPS_FLAGS;
	}
	a.cap.max_inline_data = umr_inline_want(a.cap.max_inline_data);
	ibqp = rocemu_qp_create(context, &a, vendor_flags);
	if (!ibqp) {
		free(b);
		return NULL;
	}
	attr->cap = a.cap;
	qp = to_rqp(ibqp);
	qp->umr = b;
	qp->dv_qpx.wr_mr_interleaved = wr_mr_interleaved;
	qp->dv_qpx.wr_mr_list = wr_mr_list;
	qp->dv_qpx.wr_mkey_configure = wr_mkey_configure;
	qp->dv_qpx.wr_set_mkey_access_flags = wr_set_mkey_access_flags;
	qp->dv_qpx.wr_set_mkey_layout_list = wr_set_mkey_layout_list;
	qp->dv_qpx.wr_set_mkey_layout_interleaved = wr_set_mkey_layout_interleaved;
	qp->dv_qpx.wr_set_mkey_sig_block = wr_set_mkey_sig_block;
	qp->dv_qpx.wr_set_mkey_crypto = wr_set_mkey_crypto;
	return ibqp;
}
