/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Indirect mkeys (emulator/mem/mkey_indirect.c) on the fixture's MR, past
 * check_mkey's layouts and refusals: entries granted in multiples of 4;
 * the UMR WQE's parse refusing what is cut short or too long (its
 * segments, an inline translation, the data segment of one by pointer);
 * a tag update refused; a UMR that fails leaving the key as it was; the
 * free bit taking the key out of use and back with its layout; KLM
 * padding of zero bytes taking no iova; remote invalidation for a key
 * made with it; and DESTROY_MKEY for what is no indirect key of the
 * context's.
 */
#include <check.h>
#include <errno.h>
#include <string.h>
#include <infiniband/mlx5dv.h>

#include "emulator/mem/dma.h"
#include "emulator/mem/mkey_indirect.h"
#include "emulator/mem/pd_mr.h"
#include "emulator/obj/qp.h"
#include "tests/unit/fixture.h"

#define KLM 16
#define UMR_MASK_LAYOUT                                                                      \
	(MLX5_WQE_UMR_CTRL_MKEY_MASK_FREE | MLX5_WQE_UMR_CTRL_MKEY_MASK_MKEY |                \
	 MLX5_WQE_UMR_CTRL_MKEY_MASK_LEN |                                                    \
	 MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_LOCAL_WRITE |                                     \
	 MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_REMOTE_READ |                                     \
	 MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_REMOTE_WRITE)

/* A UMR WQE after its ctrl segment, as libmlx5 writes it. */
struct umr_wqe {
	struct mlx5_wqe_umr_ctrl_seg ctrl;
	struct mlx5_wqe_mkey_context_seg mkc;
	uint8_t data[8 * KLM];
};

static uint32_t indirect_new(uint32_t entries, uint32_t flags)
{
	const struct rocemu_create_mkey_req req = {
		.pdn = fx.pdn, .max_entries = entries,
		.create_flags = MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT | flags };
	struct rocemu_create_mkey_resp resp;

	ck_assert_int_eq(rocemu_mkey_create(fx.client, &req, &resp), 0);
	return resp.key;
}

static void klm_put(struct umr_wqe *w, unsigned int i, uint32_t bytes, uint32_t key,
		    uint64_t addr)
{
	const struct mlx5_wqe_umr_klm_seg k = { .byte_count = htobe32(bytes),
						.mkey = htobe32(key), .address = htobe64(addr) };

	memcpy(w->data + i * KLM, &k, sizeof(k));
}

/* A UMR of key with an inline translation of klms octowords, length len, remote read and write. */
static void umr_init(struct umr_wqe *w, uint32_t key, unsigned int klms, uint64_t len)
{
	memset(w, 0, sizeof(*w));
	w->ctrl.flags = MLX5_WQE_UMR_CTRL_FLAG_INLINE;
	w->ctrl.klm_octowords = htobe16((uint16_t)klms);
	w->ctrl.mkey_mask = htobe64(UMR_MASK_LAYOUT);
	w->mkc.qpn_mkey = htobe32(0xffffff00 | (key & 0xff));
	w->mkc.access_flags = MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_REMOTE_READ |
			      MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_REMOTE_WRITE;
	w->mkc.len = htobe64(len);
}

/* Parse the first bytes of w and run it for fx.qp. */
static int umr_run(uint32_t key, const struct umr_wqe *w, size_t bytes)
{
	struct rocemu_umr u = { .key = key };
	int err = rocemu_umr_parse((const uint8_t *)w, (const uint8_t *)w + bytes, &u);

	return err ? err : rocemu_mkey_umr(fx_emu_qp()->mem, &u);
}

static int rkey_segs(uint32_t key, uint64_t va, uint64_t len, struct rocemu_dma_seg *segs,
		     unsigned int max, unsigned int *n)
{
	return rocemu_dma_rkey(fx_emu_qp()->mem, key, va, len,
			       IBV_ACCESS_REMOTE_WRITE, segs, max, n);
}

/* The key has one piece of len bytes at fx.buf + off, first. */
static void expect_first_seg(uint32_t key, uint64_t off, uint64_t len)
{
	struct rocemu_dma_seg seg;
	unsigned int n;

	ck_assert_int_eq(rkey_segs(key, 0, len, &seg, 1, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_ptr_eq(seg.iov.iov_base, fx.buf + off);
	ck_assert_uint_eq(seg.iov.iov_len, len);
}

START_TEST(test_create_checks)
{
	struct rocemu_create_mkey_req req = { .pdn = fx.pdn, .max_entries = 1,
					      .create_flags = MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT };
	struct rocemu_create_mkey_resp resp;

	ck_assert_int_eq(rocemu_mkey_create(fx.client, &req, &resp), 0);
	ck_assert_uint_eq(resp.max_entries, 4);
	ck_assert_uint_eq(resp.key & 0xff, 0);
	ck_assert_uint_eq(resp.key >> 8, resp.handle);
	req.max_entries = 5;
	ck_assert_int_eq(rocemu_mkey_create(fx.client, &req, &resp), 0);
	ck_assert_uint_eq(resp.max_entries, 8);
	req.max_entries = ROCEMU_MKEY_MAX_ENTRIES;
	ck_assert_int_eq(rocemu_mkey_create(fx.client, &req, &resp), 0);
	ck_assert_uint_eq(resp.max_entries, ROCEMU_MKEY_MAX_ENTRIES);
	req.create_flags = 0;
	ck_assert_int_eq(rocemu_mkey_create(fx.client, &req, &resp), -EOPNOTSUPP);
	req.create_flags = MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT;
	req.pdn = fx.pdn + 100;
	ck_assert_int_eq(rocemu_mkey_create(fx.client, &req, &resp), -EINVAL);
	ck_assert_uint_eq(resp.key, 0);
}
END_TEST

START_TEST(test_parse_refuses_short_and_long)
{
	struct mlx5_wqe_data_seg d = { .byte_count = htobe32(2 * KLM), .lkey = htobe32(fx.lkey),
				       .addr = htobe64((uintptr_t)fx.buf) };
	const size_t segs = sizeof(struct mlx5_wqe_umr_ctrl_seg) +
			    sizeof(struct mlx5_wqe_mkey_context_seg);
	struct rocemu_umr u;
	struct umr_wqe w;

	umr_init(&w, 0, 2, 0);
	ck_assert_int_eq(rocemu_umr_parse((uint8_t *)&w, (uint8_t *)&w + segs - 1, &u), -EINVAL);
	/* The inline translation cut short. */
	ck_assert_int_eq(rocemu_umr_parse((uint8_t *)&w, (uint8_t *)&w + segs + KLM, &u), -EINVAL);
	ck_assert_int_eq(rocemu_umr_parse((uint8_t *)&w, (uint8_t *)&w + segs + 2 * KLM, &u), 0);
	ck_assert_uint_eq(u.xlat_len, 2 * KLM);
	ck_assert(!u.by_pointer);
	/* More octowords than any inline translation holds. */
	w.ctrl.klm_octowords = htobe16(ROCEMU_MAX_INLINE / KLM + 1);
	ck_assert_int_eq(rocemu_umr_parse((uint8_t *)&w, (uint8_t *)&w + sizeof(w), &u), -EINVAL);
	/* By pointer: the data segment must be there and hold the whole translation. */
	w.ctrl.klm_octowords = htobe16(2);
	w.ctrl.flags = 0;
	memcpy(w.data, &d, sizeof(d));
	ck_assert_int_eq(rocemu_umr_parse((uint8_t *)&w, (uint8_t *)&w + segs + 8, &u), -EINVAL);
	ck_assert_int_eq(rocemu_umr_parse((uint8_t *)&w, (uint8_t *)&w + segs + sizeof(d), &u), 0);
	ck_assert(u.by_pointer);
	ck_assert_uint_eq(u.xlat_sge.key, fx.lkey);
	ck_assert_uint_eq(u.xlat_sge.addr, (uintptr_t)fx.buf);
	d.byte_count = htobe32(2 * KLM - 1);
	memcpy(w.data, &d, sizeof(d));
	ck_assert_int_eq(rocemu_umr_parse((uint8_t *)&w, (uint8_t *)&w + segs + sizeof(d), &u),
			 -EINVAL);
}
END_TEST

/* A failed UMR changes nothing: no tag update, no bad entry; the earlier layout stays. */
START_TEST(test_failed_umr_keeps_layout)
{
	uint32_t key = indirect_new(4, 0);
	struct rocemu_dma_seg seg;
	struct umr_wqe w;
	unsigned int n;

	umr_init(&w, key, 4, 64);
	klm_put(&w, 0, 64, fx.lkey, (uintptr_t)(fx.buf + 256));
	/* Another variant byte: a tag update, which the device does not do. */
	w.mkc.qpn_mkey = htobe32(0xffffff00 | ((key + 1) & 0xff));
	ck_assert_int_eq(umr_run(key, &w, sizeof(w)), -EOPNOTSUPP);
	ck_assert_int_eq(rkey_segs(key, 0, 8, &seg, 1, &n), -ENOKEY);
	umr_init(&w, key, 4, 64);
	klm_put(&w, 0, 64, fx.lkey, (uintptr_t)(fx.buf + 256));
	ck_assert_int_eq(umr_run(key, &w, sizeof(w)), 0);
	expect_first_seg(key, 256, 64);
	/* An entry of no key, then one past the MR: refused, the key as it was. */
	umr_init(&w, key, 4, 32);
	klm_put(&w, 0, 32, fx.lkey ^ 0x100, (uintptr_t)fx.buf);
	ck_assert_int_eq(umr_run(key, &w, sizeof(w)), -ENOKEY);
	klm_put(&w, 0, 32, fx.lkey, (uintptr_t)(fx.buf + FX_BUF_BYTES - 16));
	ck_assert_int_eq(umr_run(key, &w, sizeof(w)), -ERANGE);
	expect_first_seg(key, 256, 64);
	ck_assert_int_eq(rkey_segs(key, 0, 65, &seg, 1, &n), -ERANGE);
}
END_TEST

/* The free bit takes the key out of use; cleared by a UMR of no translation, its layout is back. */
START_TEST(test_free_and_back)
{
	uint32_t key = indirect_new(4, 0);
	struct rocemu_dma_seg seg;
	struct umr_wqe w;
	unsigned int n;

	umr_init(&w, key, 4, 16);
	klm_put(&w, 0, 16, fx.lkey, (uintptr_t)(fx.buf + 32));
	ck_assert_int_eq(umr_run(key, &w, sizeof(w)), 0);
	expect_first_seg(key, 32, 16);
	umr_init(&w, key, 0, 0);
	w.ctrl.mkey_mask = htobe64(MLX5_WQE_UMR_CTRL_MKEY_MASK_FREE);
	w.mkc.free = MLX5_WQE_MKEY_CONTEXT_FREE;
	ck_assert_int_eq(umr_run(key, &w, sizeof(w)), 0);
	ck_assert_int_eq(rkey_segs(key, 0, 8, &seg, 1, &n), -ENOKEY);
	w.mkc.free = 0;
	ck_assert_int_eq(umr_run(key, &w, sizeof(w)), 0);
	expect_first_seg(key, 32, 16);
}
END_TEST

/* Zero-byte KLMs (libmlx5's padding to a multiple of 4) take no iova. */
START_TEST(test_padding_takes_nothing)
{
	uint32_t key = indirect_new(4, 0);
	struct rocemu_dma_seg segs[4];
	struct umr_wqe w;
	unsigned int n;

	umr_init(&w, key, 4, 24);
	klm_put(&w, 0, 10, fx.lkey, (uintptr_t)(fx.buf + 100));
	klm_put(&w, 1, 0, fx.lkey ^ 0x100, 0);
	klm_put(&w, 2, 14, fx.lkey, (uintptr_t)(fx.buf + 500));
	ck_assert_int_eq(umr_run(key, &w, sizeof(w)), 0);
	ck_assert_int_eq(rkey_segs(key, 0, 24, segs, 4, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_ptr_eq(segs[0].iov.iov_base, fx.buf + 100);
	ck_assert_uint_eq(segs[0].iov.iov_len, 10);
	ck_assert_ptr_eq(segs[1].iov.iov_base, fx.buf + 500);
	ck_assert_uint_eq(segs[1].iov.iov_len, 14);
	/* The length must be what the entries add up to. */
	w.mkc.len = htobe64(25);
	ck_assert_int_eq(umr_run(key, &w, sizeof(w)), -EINVAL);
}
END_TEST

/* A key made with REMOTE_INVALIDATE may be invalidated by the peer (SEND with invalidate). */
START_TEST(test_remote_invalidate_flag)
{
	uint32_t key = indirect_new(4, MLX5DV_MKEY_INIT_ATTR_FLAGS_REMOTE_INVALIDATE);
	struct rocemu_dma_seg seg;
	struct umr_wqe w;
	unsigned int n;

	umr_init(&w, key, 4, 16);
	klm_put(&w, 0, 16, fx.lkey, (uintptr_t)fx.buf);
	ck_assert_int_eq(umr_run(key, &w, sizeof(w)), 0);
	ck_assert_int_eq(rocemu_mr_invalidate(fx_emu_qp()->mem, key, true), 0);
	ck_assert_int_eq(rkey_segs(key, 0, 8, &seg, 1, &n), -ENOKEY);
}
END_TEST

START_TEST(test_destroy_checks)
{
	struct rocemu_client *other = fx_client_new();
	uint32_t key = indirect_new(4, 0);
	struct rocemu_dma_seg seg;
	unsigned int n;

	/* The fixture's MR is no indirect key; another context has none of its ufile. */
	ck_assert_int_eq(rocemu_mkey_destroy(fx.client, fx.lkey >> 8), -EINVAL);
	ck_assert_int_eq(rocemu_mkey_destroy(other, key >> 8), -EINVAL);
	ck_assert_int_eq(rocemu_mkey_destroy(fx.client, key >> 8), 0);
	ck_assert_int_eq(rocemu_mkey_destroy(fx.client, key >> 8), -EINVAL);
	/* The MR is untouched: still reached through its key. */
	ck_assert_int_eq(rkey_segs(fx.rkey, (uintptr_t)fx.buf, 8, &seg, 1, &n), 0);
	ck_assert_ptr_eq(seg.iov.iov_base, fx.buf);
}
END_TEST

static Suite *mkey_indirect_suite(void)
{
	Suite *s = suite_create("mkey_indirect");
	TCase *tc = tcase_create("mkey_indirect");

	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_add_test(tc, test_create_checks);
	tcase_add_test(tc, test_parse_refuses_short_and_long);
	tcase_add_test(tc, test_failed_umr_keeps_layout);
	tcase_add_test(tc, test_free_and_back);
	tcase_add_test(tc, test_padding_takes_nothing);
	tcase_add_test(tc, test_remote_invalidate_flag);
	tcase_add_test(tc, test_destroy_checks);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return fx_suite_run(mkey_indirect_suite());
}
