/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Indirect memory keys (mlx5dv_create_mkey): keys with no memory of their
 * own, made valid by a UMR WQE (mlx5dv_wr_mr_list, mlx5dv_wr_mr_interleaved,
 * mlx5dv_wr_mkey_configure and its setters) over a KLM list of
 * (lkey, addr, bytes) entries, or a repeat block of entries interleaved
 * repeat_count times. Their iova space is zero-based: byte i of the key is
 * found by walking the layout, which the DMA engine does (dma.h),
 * resolving each piece of an access through its entry's lkey again, so
 * an MR deregistered or invalidated under the key fails the access
 * instead of reaching memory;
 * an entry may not be another indirect key (no nesting).
 *
 * Errors of a UMR: -ENOKEY, -EPERM, -EACCES, -ERANGE for its key or an
 * entry's (as rocemu_mkey_resolve), -EINVAL for a malformed WQE or a
 * layout past the key's entries, -EOPNOTSUPP for what the device lacks
 * (signature and crypto BSFs, tag updates). The translation is inline
 * (what libmlx5 writes) or in registered memory a data segment names.
 */
#ifndef ROCEMU_EMULATOR_MKEY_INDIRECT_H
#define ROCEMU_EMULATOR_MKEY_INDIRECT_H

#include <stdbool.h>
#include <stdint.h>
#include <infiniband/mlx5dv.h>

#include "emulator/core/device.h"
#include "emulator/mem/dma.h"
#include "emulator/mem/mkey.h"
#include "rocemu/ctrl.h"

struct rocemu_client;

/* The second word of a UMR repeat block: never an MR's key (pd_mr.c). */
#define ROCEMU_UMR_REPEAT_OP 0x400u

struct rocemu_mkey_entry {
	uint64_t addr;		/* in the entry key's iova space */
	uint32_t key;		/* an lkey of an MR of the key's PD */
	uint32_t bytes;		/* taken from it per repetition */
	uint32_t stride;	/* from one repetition to the next (interleaved) */
};

struct rocemu_mkey_layout {
	uint32_t max_entries;		/* granted at creation: a multiple of 4 */
	bool remote_invalidate;		/* MLX5DV_MKEY_INIT_ATTR_FLAGS_REMOTE_INVALIDATE */
	uint32_t repeat;		/* repetitions of the entries (1 for a KLM list) */
	uint64_t block;			/* bytes of one repetition */
	uint32_t num;
	struct rocemu_mkey_entry entry[ROCEMU_MKEY_MAX_ENTRIES];
};

/* CREATE_MKEY: -EINVAL for a bad PD or too many entries, -EOPNOTSUPP for offload flags. */
int rocemu_mkey_create(struct rocemu_client *c, const struct rocemu_create_mkey_req *req,
		       struct rocemu_create_mkey_resp *resp);
/* DESTROY_MKEY: -EINVAL unless handle is an indirect mkey of c's ufile. */
int rocemu_mkey_destroy(struct rocemu_client *c, uint32_t handle);

/*
 * A UMR as posted: its segments stay mlx5's, the mkey operation a
 * ConnectX defines them for; the translation inline or by pointer.
 */
struct rocemu_umr {
	uint32_t key;				/* the indirect mkey */
	struct mlx5_wqe_umr_ctrl_seg ctrl;
	struct mlx5_wqe_mkey_context_seg mkc;
	uint32_t xlat_len;			/* bytes of translation */
	bool by_pointer;			/* in registered memory at xlat_sge */
	struct rocemu_sge xlat_sge;
	uint8_t xlat[ROCEMU_MAX_INLINE];	/* else inline */
};

/*
 * The UMR WQE after its ctrl segment, [seg, end): the UMR control and
 * mkey context segments, and the inline translation or the data segment
 * naming it. u->key is the caller's.
 */
int rocemu_umr_parse(const uint8_t *seg, const uint8_t *end, struct rocemu_umr *u);
/* Execute the UMR u for owner: its mkey takes the new layout, access and state at once. */
int rocemu_mkey_umr(struct rocemu_mem_owner owner, const struct rocemu_umr *u);

#endif /* ROCEMU_EMULATOR_MKEY_INDIRECT_H */
