/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/wq/rwq_ind_table.h"

#include <errno.h>
#include <stdlib.h>

#include "emulator/core/device.h"
#include "emulator/wq/wq.h"
#include "rocemu/log.h"

/* Tables a context may hold: mlx5's RQTs are many; this bounds the id table. */
#define RWQ_IND_TABLES_MAX 4096

int rocemu_rwq_ind_table_create(struct rocemu_client *c,
				const struct rocemu_create_rwq_ind_table_req *req,
				struct rocemu_create_rwq_ind_table_resp *resp)
{
	struct rocemu_rwq_ind_table *t;
	uint32_t i, n;
	int err;

	if (req->log_size > ROCEMU_RWQ_IND_TABLE_MAX_LOG)
		return -EINVAL;
	n = 1u << req->log_size;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->wqs = calloc(n, sizeof(*t->wqs));
	if (!t->wqs) {
		free(t);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		t->wqs[i] = rocemu_wq_lookup(c, req->wqns[i]);
		if (!t->wqs[i]) {
			err = -EINVAL;
			goto fail;
		}
	}
	err = rocemu_obj_add(c->emu, &rocemu_rwq_ind_table_kind, c, t);
	if (err)
		goto fail;
	t->log_size = req->log_size;
	for (i = 0; i < n; i++)
		t->wqs[i]->tables++;
	*resp = (struct rocemu_create_rwq_ind_table_resp){ .handle = t->handle };
	rocemu_log(ROCEMU_LOG_DEBUG, "%s rwq_ind_table %u create of %u WQs, the first 0x%06x",
		   c->dev->name, t->handle, n, t->wqs[0]->wqn);
	return 0;

fail:
	free(t->wqs);
	free(t);
	return err;
}

struct rocemu_rwq_ind_table *rocemu_rwq_ind_table_lookup(const struct rocemu_client *c,
							 uint32_t handle)
{
	return rocemu_obj_lookup(c->emu, &rocemu_rwq_ind_table_kind, c, handle);
}

static void table_free(struct rocemu_emu *emu, struct rocemu_rwq_ind_table *t)
{
	uint32_t i;

	rocemu_log(ROCEMU_LOG_DEBUG, "%s rwq_ind_table %u destroy", t->owner->dev->name, t->handle);
	rocemu_obj_remove(emu, &rocemu_rwq_ind_table_kind, t);
	for (i = 0; i < 1u << t->log_size; i++)
		t->wqs[i]->tables--;
	free(t->wqs);
	free(t);
}

int rocemu_rwq_ind_table_destroy(struct rocemu_client *c, uint32_t handle)
{
	struct rocemu_rwq_ind_table *t = rocemu_rwq_ind_table_lookup(c, handle);

	if (!t)
		return -EINVAL;
	if (t->users)
		return -EBUSY;
	table_free(c->emu, t);
	return 0;
}

ROCEMU_OBJ_KIND(rocemu_rwq_ind_table_kind, struct rocemu_rwq_ind_table, struct rocemu_client,
		rwq_ind_tables, rwq_ind_tables, owner, handle, node, table_free, .first = 1,
		.max = RWQ_IND_TABLES_MAX * ROCEMU_MAX_DEVICES);

struct rocemu_wq *rocemu_rss_select(const struct rocemu_rwq_ind_table *t,
				    const struct rocemu_rss_conf *conf,
				    const struct rocemu_eth_frame *f, struct rocemu_rss_hash *hash)
{
	rocemu_rss_hash(f, conf, hash);
	return t->wqs[hash->value & ((1u << t->log_size) - 1)];
}
