/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Device memory (verbs_context ops alloc_dm, free_dm, reg_dm_mr, and
 * ibv_import_dm/ibv_unimport_dm): the daemon's memfd of the region, mapped
 * here, read and written by the ibv_dm copy ops in 4-byte words as
 * mlx5_access_dm does, and registered as a zero-based MR.
 */
#include "lib/shim.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rocemu/log.h"

/* What mlx5_reg_dm_mr lets through to the kernel (MLX5_DM_ALLOWED_ACCESS). */
#define DM_ALLOWED_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |	\
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |	\
			   IBV_ACCESS_ZERO_BASED | IBV_ACCESS_OPTIONAL_RANGE)

struct rocemu_dm {
	struct ibv_dm ibdm;
	uint32_t *map;			/* the region, in 4-byte words */
	size_t map_size;
	uint64_t length;
};

static struct rocemu_dm *to_rdm(struct ibv_dm *dm)
{
	return container_of(dm, struct rocemu_dm, ibdm);
}

/* mlx5_access_dm: bounds (EFAULT), then 4-byte alignment (EINVAL), then word by word. */
static int dm_access(struct ibv_dm *ibdm, uint64_t dm_offset, void *host_addr, size_t length,
		     bool read)
{
	struct rocemu_dm *dm = to_rdm(ibdm);
	uint32_t *dev = dm->map + dm_offset / 4, word;
	char *host = host_addr;
	size_t i;

	if (dm_offset > dm->length || length > dm->length - dm_offset)
		return EFAULT;
	if ((length & 3) || (dm_offset & 3))
		return EINVAL;
	/* The host buffer may be unaligned: memcpy there, whole words on the device. */
	for (i = 0; i < length / 4; i++) {
		if (read) {
			word = __atomic_load_n(&dev[i], __ATOMIC_RELAXED);
			memcpy(host + 4 * i, &word, sizeof(word));
		} else {
			memcpy(&word, host + 4 * i, sizeof(word));
			__atomic_store_n(&dev[i], word, __ATOMIC_RELAXED);
		}
	}
	return 0;
}

static int dm_memcpy_to(struct ibv_dm *dm, uint64_t dm_offset, const void *host_addr,
			size_t length)
{
	return dm_access(dm, dm_offset, (void *)host_addr, length, false);
}

static int dm_memcpy_from(void *host_addr, struct ibv_dm *dm, uint64_t dm_offset, size_t length)
{
	return dm_access(dm, dm_offset, host_addr, length, true);
}

/* The ibv_dm of a DM the daemon answered op with (fd: its memfd). NULL + errno on failure. */
static struct ibv_dm *dm_map(struct ibv_context *context, enum rocemu_ctrl_op op, const void *req)
{
	struct rocemu_dm_resp resp;
	struct rocemu_dm *dm;
	int fd, err;

	dm = calloc(1, sizeof(*dm));
	if (!dm) {
		errno = ENOMEM;
		return NULL;
	}
	err = rocemu_conn_call(&to_rctx(context)->conn, op, req, &resp, &fd, 1);
	if (err) {
		free(dm);
		errno = -err;
		return NULL;
	}
	if (resp.length > resp.map_size) {
		close(fd);
		fd = -1;
	}
	dm->map = fd < 0 ? NULL : rocemu_map_shared(fd, resp.map_size);
	if (!dm->map) {
		struct rocemu_handle_req free_req = { .handle = resp.handle };

		/* An allocation nobody can reach is given back; an import just fails. */
		if (op == ROCEMU_OP_ALLOC_DM)
			rocemu_conn_call(&to_rctx(context)->conn, ROCEMU_OP_FREE_DM, &free_req,
					 NULL, NULL, 0);
		free(dm);
		errno = ENOMEM;
		return NULL;
	}
	dm->map_size = resp.map_size;
	dm->length = resp.length;
	dm->ibdm.context = context;
	dm->ibdm.memcpy_to_dm = dm_memcpy_to;
	dm->ibdm.memcpy_from_dm = dm_memcpy_from;
	dm->ibdm.comp_mask = IBV_DM_MASK_HANDLE;
	dm->ibdm.handle = resp.handle;
	rocemu_log(ROCEMU_LOG_DEBUG, "%s dm %u len %llu mapped", to_rctx(context)->info.name,
		   resp.handle, (unsigned long long)resp.length);
	return &dm->ibdm;
}

static void dm_unmap(struct ibv_dm *ibdm)
{
	struct rocemu_dm *dm = to_rdm(ibdm);

	munmap(dm->map, dm->map_size);
	free(dm);
}

struct ibv_dm *rocemu_alloc_dm_op(struct ibv_context *context, struct ibv_alloc_dm_attr *attr)
{
	struct rocemu_alloc_dm_req req = { .length = attr->length,
					   .log_align_req = attr->log_align_req };

	/* mlx5: no comp_mask bit is known; a length over max_dm_size never reaches the kernel. */
	if (attr->comp_mask || attr->length > ROCEMU_DM_MAX_SIZE) {
		errno = EINVAL;
		return NULL;
	}
	return dm_map(context, ROCEMU_OP_ALLOC_DM, &req);
}

int rocemu_free_dm_op(struct ibv_dm *dm)
{
	struct rocemu_handle_req req = { .handle = dm->handle };
	int err = rocemu_conn_call(&to_rctx(dm->context)->conn, ROCEMU_OP_FREE_DM, &req, NULL,
				   NULL, 0);

	if (err)
		return rocemu_errno_value(err);
	dm_unmap(dm);
	return 0;
}

struct ibv_mr *rocemu_reg_dm_mr_op(struct ibv_pd *pd, struct ibv_dm *dm, uint64_t dm_offset,
				   size_t length, unsigned int access)
{
	struct rocemu_reg_dm_mr_req req = {
		.pdn = to_rpd(pd)->pdn, .dm = dm->handle, .offset = dm_offset, .length = length,
		.access = access & ~(unsigned int)IBV_ACCESS_OPTIONAL_RANGE,
	};

	/* mlx5_reg_dm_mr, then ibv_cmd_reg_dm_mr: DM MRs are always zero based. */
	if ((access & ~DM_ALLOWED_ACCESS) || !(access & IBV_ACCESS_ZERO_BASED)) {
		errno = EINVAL;
		return NULL;
	}
	return rocemu_mr_new(pd, ROCEMU_OP_REG_DM_MR, &req, NULL);
}

struct ibv_dm *ibv_import_dm(struct ibv_context *context, uint32_t dm_handle)
{
	struct rocemu_handle_req req = { .handle = dm_handle };

	if (!rocemu_ctx_is_ours(context))
		return REAL(ibv_import_dm)(context, dm_handle);
	return dm_map(context, ROCEMU_OP_IMPORT_DM, &req);
}

void ibv_unimport_dm(struct ibv_dm *dm)
{
	if (!rocemu_ctx_is_ours(dm->context)) {
		REAL(ibv_unimport_dm)(dm);
		return;
	}
	dm_unmap(dm);
}

int rocemu_dm_dv(struct ibv_dm *ibdm, struct mlx5dv_dm *out)
{
	struct rocemu_dm *dm = to_rdm(ibdm);
	uint64_t mask_out = 0;

	out->buf = dm->map;
	out->length = dm->length;
	/* mlx5 gives a remote address for steering ICM only: MEMIC's reads 0. */
	if (out->comp_mask & MLX5DV_DM_MASK_REMOTE_VA) {
		out->remote_va = 0;
		mask_out |= MLX5DV_DM_MASK_REMOTE_VA;
	}
	out->comp_mask = mask_out;
	return 0;
}
