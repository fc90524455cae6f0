/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The memory window bind WQE of the data path contract: opcode
 * MLX5_OPCODE_UMR, a ctrl segment (ds = 3) and then this one 32-byte
 * segment, all big-endian. The daemon is its only reader, so it is
 * rocemu's own layout rather than mlx5's UMR/mkey segments.
 */
#ifndef ROCEMU_WQE_BIND_H
#define ROCEMU_WQE_BIND_H

#include <linux/types.h>

struct rocemu_wqe_bind_seg {
	__be32 mw_rkey;		/* the window's current rkey: names it */
	__be32 new_rkey;	/* its rkey once bound (only the low 8 bits may change) */
	__be32 mr_lkey;		/* the MR it opens onto; 0 with length 0: unbind (type 1) */
	__be32 access;		/* IBV_ACCESS_REMOTE_* of the window */
	__be64 addr;		/* window start, in the MR's iova space */
	__be64 length;
};

#endif /* ROCEMU_WQE_BIND_H */
