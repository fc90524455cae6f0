/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Receive WQ indirection tables (ibv_create_rwq_ind_table): 1 << log_size
 * WQs of the context, what an RSS QP spreads its frames over by their
 * hash, as a ConnectX's RQT under a TIR. Functions return 0 or -errno.
 */
#ifndef ROCEMU_EMULATOR_RWQ_IND_TABLE_H
#define ROCEMU_EMULATOR_RWQ_IND_TABLE_H

#include <stdint.h>

#include "emulator/core/client.h"
#include "emulator/core/object.h"
#include "net/eth/eth_frame.h"
#include "net/eth/toeplitz.h"

struct rocemu_wq;

struct rocemu_rwq_ind_table {
	struct rocemu_client *owner;
	struct rocemu_list node;	/* in owner->rwq_ind_tables */
	uint32_t handle;
	uint32_t log_size;
	uint32_t users;			/* RSS QPs on it: the QP's create adds one, its destroy takes it */
	struct rocemu_wq **wqs;		/* 1 << log_size */
};

/*
 * Create a table of req->wqns[0, 1 << log_size): -EINVAL for log_size past
 * ROCEMU_RWQ_IND_TABLE_MAX_LOG or a WQ c does not own (mlx5_ib_create_rwq_ind_table).
 */
int rocemu_rwq_ind_table_create(struct rocemu_client *c,
				const struct rocemu_create_rwq_ind_table_req *req,
				struct rocemu_create_rwq_ind_table_resp *resp);
/* -EBUSY while a QP uses it. */
int rocemu_rwq_ind_table_destroy(struct rocemu_client *c, uint32_t handle);
struct rocemu_rwq_ind_table *rocemu_rwq_ind_table_lookup(const struct rocemu_client *c,
							 uint32_t handle);
/* Tables as objects of their context (object.h), freed when it closes, before its WQs. */
extern const struct rocemu_obj_kind rocemu_rwq_ind_table_kind;

/*
 * The WQ of t a frame f goes to on an RSS QP hashing by conf, and the
 * hash for its CQE: the table's entry the hash's low bits name (the first
 * when f is not hashed, rocemu_rss_hash).
 */
struct rocemu_wq *rocemu_rss_select(const struct rocemu_rwq_ind_table *t,
				    const struct rocemu_rss_conf *conf,
				    const struct rocemu_eth_frame *f, struct rocemu_rss_hash *hash);

#endif /* ROCEMU_EMULATOR_RWQ_IND_TABLE_H */
