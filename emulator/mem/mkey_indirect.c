/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/mem/mkey_indirect.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <infiniband/mlx5dv.h>

#include "emulator/core/client.h"
#include "emulator/mem/dma.h"
#include "emulator/mem/mkey.h"
#include "emulator/mem/pd_mr.h"
#include "rocemu/log.h"

#define KLM_BYTES 16	/* a KLM, a repeat block header or entry: one octoword */

/* The create flags an emulated device takes: no signature, crypto or tag update. */
#define MKEY_CREATE_FLAGS \
	((uint32_t)(MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT | MLX5DV_MKEY_INIT_ATTR_FLAGS_REMOTE_INVALIDATE))

/* The mkey context fields a UMR may set here; BSF (signature, crypto) and the rest are refused. */
#define UMR_MASK_ACCESS                                                                      \
	((uint64_t)(MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_LOCAL_WRITE |                        \
		    MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_REMOTE_READ |                        \
		    MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_REMOTE_WRITE |                       \
		    MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_ATOMIC))
#define UMR_MASK_TAKEN                                                                      \
	(UMR_MASK_ACCESS | MLX5_WQE_UMR_CTRL_MKEY_MASK_LEN | MLX5_WQE_UMR_CTRL_MKEY_MASK_MKEY | \
	 MLX5_WQE_UMR_CTRL_MKEY_MASK_FREE)

/* A key's variant byte is 0, as mlx5's create_mkey makes it; never a value a WQE gives a meaning. */
static bool key_usable(uint32_t key)
{
	return key != MLX5_INVALID_LKEY && key != ROCEMU_UMR_REPEAT_OP;
}

int rocemu_mkey_create(struct rocemu_client *c, const struct rocemu_create_mkey_req *req,
		       struct rocemu_create_mkey_resp *resp)
{
	struct rocemu_pd *pd = rocemu_pd_lookup(c, req->pdn);
	struct rocemu_mkey_layout *l;
	struct rocemu_mr *mr;
	int err;

	memset(resp, 0, sizeof(*resp));
	if (!req->create_flags || (req->create_flags & ~MKEY_CREATE_FLAGS))
		return -EOPNOTSUPP;
	if (!pd || req->max_entries > ROCEMU_MKEY_MAX_ENTRIES)
		return -EINVAL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	err = rocemu_mr_create(c, pd, 0, NULL, 0, 0, 0, &mr);
	if (err) {
		free(l);
		return err;
	}
	/* Created free: no access through it until a UMR. */
	mr->indirect = l;
	mr->invalid = true;
	while (!key_usable(mr->handle << 8)) {
		err = rocemu_obj_renumber(c->emu, &rocemu_mr_kind, mr);
		if (err) {
			rocemu_mr_free(c->emu, mr);
			return err;
		}
	}
	mr->lkey = mr->rkey = mr->handle << 8;
	l->max_entries = (req->max_entries + 3) & ~3u;
	l->remote_invalidate = req->create_flags & MLX5DV_MKEY_INIT_ATTR_FLAGS_REMOTE_INVALIDATE;
	resp->handle = mr->handle;
	resp->key = mr->lkey;
	resp->max_entries = l->max_entries;
	rocemu_log(ROCEMU_LOG_DEBUG, "%s mkey 0x%08x pd %u indirect, %u entries", c->dev->name,
		   mr->lkey, pd->pdn, l->max_entries);
	return 0;
}

int rocemu_mkey_destroy(struct rocemu_client *c, uint32_t handle)
{
	struct rocemu_mr *mr = rocemu_obj_lookup(c->emu, &rocemu_mr_kind, c->ufile, handle);

	if (!mr || !mr->indirect)
		return -EINVAL;
	rocemu_mr_free(c->emu, mr);
	return 0;
}

int rocemu_umr_parse(const uint8_t *seg, const uint8_t *end, struct rocemu_umr *u)
{
	size_t xlat;

	if ((size_t)(end - seg) < sizeof(u->ctrl) + sizeof(u->mkc))
		return -EINVAL;
	memcpy(&u->ctrl, seg, sizeof(u->ctrl));
	seg += sizeof(u->ctrl);
	memcpy(&u->mkc, seg, sizeof(u->mkc));
	seg += sizeof(u->mkc);
	xlat = (size_t)be16toh(u->ctrl.klm_octowords) * KLM_BYTES;
	if (xlat > sizeof(u->xlat))
		return -EINVAL;
	u->xlat_len = (uint32_t)xlat;
	u->by_pointer = xlat && !(u->ctrl.flags & MLX5_WQE_UMR_CTRL_FLAG_INLINE);
	if (u->by_pointer) {
		struct mlx5_wqe_data_seg d;

		/* By pointer: one data segment naming the translation in registered memory. */
		if ((size_t)(end - seg) < sizeof(d))
			return -EINVAL;
		memcpy(&d, seg, sizeof(d));
		u->xlat_sge = (struct rocemu_sge){ .addr = be64toh(d.addr), .key = be32toh(d.lkey),
						   .length = be32toh(d.byte_count) };
		return u->xlat_sge.length >= xlat ? 0 : -EINVAL;
	}
	if (xlat > (size_t)(end - seg))
		return -EINVAL;
	memcpy(u->xlat, seg, xlat);
	return 0;
}

/* The translation of a UMR by pointer into buf (u->xlat_len bytes), read through its lkey. */
static int xlat_read(struct rocemu_mem_owner owner, const struct rocemu_umr *u, uint8_t *buf)
{
	struct rocemu_dma_seg remote[ROCEMU_DMA_MAX_SEGS];
	struct iovec local = { buf, u->xlat_len };
	unsigned int n;
	int err = rocemu_dma_sgl(owner, &u->xlat_sge, 1, 0, u->xlat_len, 0, remote,
				 ROCEMU_DMA_MAX_SEGS, &n);

	return err ? err : rocemu_dma_copy(owner.client->mm, &local, 1, remote, n, false);
}

static uint32_t be32_at(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return be32toh(v);
}

/* A KLM list: every octoword an entry, zero-length ones (the padding) taking nothing. */
static void klm_list_parse(struct rocemu_mkey_layout *l, const uint8_t *t, uint32_t count)
{
	struct mlx5_wqe_umr_klm_seg klm;
	uint32_t i;

	l->repeat = 1;
	l->block = 0;
	l->num = 0;
	for (i = 0; i < count; i++) {
		struct rocemu_mkey_entry *e = &l->entry[l->num];

		memcpy(&klm, t + i * KLM_BYTES, sizeof(klm));
		e->bytes = be32toh(klm.byte_count);
		if (!e->bytes)
			continue;
		e->key = be32toh(klm.mkey);
		e->addr = be64toh(klm.address);
		e->stride = e->bytes;
		l->block += e->bytes;
		l->num++;
	}
}

/* A repeat block: its header, then num_ent entries of (stride, bytes, key, va). */
static int repeat_block_parse(struct rocemu_mkey_layout *l, const uint8_t *t, uint32_t count)
{
	struct mlx5_wqe_umr_repeat_block_seg rb;
	struct mlx5_wqe_umr_repeat_ent_seg ent;
	uint32_t i, num;

	memcpy(&rb, t, sizeof(rb));
	num = be16toh(rb.num_ent);
	if (num > count - 1)
		return -EINVAL;
	l->repeat = be32toh(rb.repeat_count);
	l->block = 0;
	l->num = num;
	for (i = 0; i < num; i++) {
		struct rocemu_mkey_entry *e = &l->entry[i];

		memcpy(&ent, t + (i + 1) * KLM_BYTES, sizeof(ent));
		e->bytes = be16toh(ent.byte_count);
		e->stride = be16toh(ent.stride);
		e->key = be32toh(ent.memkey);
		e->addr = be64toh(ent.va);
		l->block += e->bytes;
	}
	/* The header states the bytes of one repetition: it must add up. */
	return be32toh(rb.byte_count) == l->block ? 0 : -EINVAL;
}

/* Every entry's key: an MR (not another indirect key) of owner's PD holding all it will reach. */
static int layout_check(struct rocemu_mem_owner owner, const struct rocemu_mkey_layout *l)
{
	struct rocemu_mkey_ref ref;
	uint64_t span;
	uint32_t i;
	int err;

	if (!l->repeat)
		return 0;
	for (i = 0; i < l->num; i++) {
		const struct rocemu_mkey_entry *e = &l->entry[i];

		if (!e->bytes)
			continue;
		span = (uint64_t)(l->repeat - 1) * e->stride + e->bytes;
		err = rocemu_mkey_resolve(owner, e->key, ROCEMU_MKEY_LOCAL, e->addr, span, 0, &ref);
		if (err)
			return err;
		if (ref.mr->indirect)
			return -ENOKEY;
	}
	return 0;
}

/* A translation of len bytes into l (its entries bounded by the key's). */
static int layout_parse(struct rocemu_mkey_layout *l, const uint8_t *t, uint32_t len)
{
	uint32_t count = len / KLM_BYTES;

	if (count > l->max_entries)
		return -EINVAL;
	if (count && be32_at(t + 4) == ROCEMU_UMR_REPEAT_OP)
		return repeat_block_parse(l, t, count);
	klm_list_parse(l, t, count);
	return 0;
}

/* IBV_ACCESS_* of the mkey context's access flags. */
static uint32_t mkc_access(uint8_t flags)
{
	return (flags & MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_LOCAL_WRITE ? IBV_ACCESS_LOCAL_WRITE : 0) |
	       (flags & MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_REMOTE_READ ? IBV_ACCESS_REMOTE_READ : 0) |
	       (flags & MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_REMOTE_WRITE ? IBV_ACCESS_REMOTE_WRITE : 0) |
	       (flags & MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_ATOMIC ? IBV_ACCESS_REMOTE_ATOMIC : 0);
}

int rocemu_mkey_umr(struct rocemu_mem_owner owner, const struct rocemu_umr *u)
{
	const struct mlx5_wqe_mkey_context_seg *mkc = &u->mkc;
	uint64_t mask = be64toh(u->ctrl.mkey_mask);
	uint32_t key = u->key, access;
	uint8_t by_pointer[sizeof(u->xlat)];
	struct rocemu_mkey_layout next;
	struct rocemu_mkey_ref ref;
	struct rocemu_mr *mr;
	int err;

	err = rocemu_mkey_resolve(owner, key, ROCEMU_MKEY_INVALIDATE, 0, 0, 0, &ref);
	if (err)
		return err;
	if (ref.mw || !ref.mr->indirect)
		return -ENOKEY;
	mr = ref.mr;
	if (mask & ~UMR_MASK_TAKEN)
		return -EOPNOTSUPP;
	/* No tag update: the key's variant stays what it is. */
	if ((mask & MLX5_WQE_UMR_CTRL_MKEY_MASK_MKEY) && (be32toh(mkc->qpn_mkey) & 0xff) != (key & 0xff))
		return -EOPNOTSUPP;
	next = *mr->indirect;
	if (u->xlat_len) {
		err = u->by_pointer ? xlat_read(owner, u, by_pointer) : 0;
		if (!err)
			err = layout_parse(&next, u->by_pointer ? by_pointer : u->xlat, u->xlat_len);
		if (!err)
			err = layout_check(owner, &next);
		if (err)
			return err;
	}
	if ((mask & MLX5_WQE_UMR_CTRL_MKEY_MASK_LEN) && be64toh(mkc->len) != next.block * next.repeat)
		return -EINVAL;
	access = mr->access;
	if (mask & UMR_MASK_ACCESS)
		access = mkc_access(mkc->access_flags);
	*mr->indirect = next;
	mr->length = next.block * next.repeat;
	mr->access = access;
	if (mask & MLX5_WQE_UMR_CTRL_MKEY_MASK_FREE)
		mr->invalid = mkc->free & MLX5_WQE_MKEY_CONTEXT_FREE;
	rocemu_log(ROCEMU_LOG_DEBUG, "%s qp 0x%06x mkey 0x%08x: %u entries x %u, %llu bytes, access 0x%x%s",
		   owner.client->dev->name, owner.qpn, key, next.num, next.repeat,
		   (unsigned long long)mr->length, access, mr->invalid ? ", free" : "");
	return 0;
}
