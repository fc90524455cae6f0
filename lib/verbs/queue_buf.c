/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The memory libmlx5 takes for a CQ's, QP's or SRQ's buffer when no
 * parent domain's allocator does: the kind MLX_CQ_ALLOC_TYPE,
 * MLX_QP_ALLOC_TYPE or MLX_SRQ_ALLOC_TYPE names, read at each create as
 * mlx5_get_alloc_type reads it, and huge pages taken as alloc_huge_buf
 * takes them: 32 KiB chunks of SysV SHM_HUGETLB segments of 2 MiB or more,
 * shared by the buffers of a context. So a create fails where libmlx5's
 * would, with its errno. The rings stay in the daemon's memfd
 * (lib/README.md says why): the chunks are held for the object's life.
 */
#include "lib/shim.h"

#include <stdlib.h>
#include <strings.h>
#include <sys/ipc.h>
#include <sys/shm.h>

#define HUGE_SEG_SIZE (2UL << 20)	/* mlx5's MLX5_SHM_LENGTH, a 2 MiB huge page */
#define HUGE_CHUNK (32UL << 10)		/* mlx5's MLX5_Q_CHUNK_SIZE */

/* How each MLX_*_ALLOC_TYPE value allocates (mlx5_alloc_prefered_buf's fallbacks). */
struct alloc_type {
	const char *name;
	bool huge;		/* try huge pages first */
	bool contig;		/* then physically contiguous pages */
	bool required;		/* no fallback to ordinary pages */
};

static const struct alloc_type alloc_types[] = {
	{ "ANON", false, false, false },
	{ "HUGE", true, false, true },
	{ "CONTIG", false, true, true },
	{ "PREFER_HUGE", true, false, false },
	{ "PREFER_CONTIG", false, true, false },
	{ "ALL", true, true, false },
};

/* A segment of huge pages and which of its chunks buffers hold. */
struct rocemu_huge_seg {
	struct rocemu_huge_seg *next;
	char *addr;
	uint32_t nchunks;
	uint64_t used[];	/* a bit per chunk */
};

/* The type env names for a resource type; ANON for none or a value mlx5 does not know. */
static const struct alloc_type *alloc_type_of(uint64_t res_type)
{
	const char *name = res_type == MLX5DV_RES_TYPE_CQ ? "MLX_CQ_ALLOC_TYPE" :
			   res_type == MLX5DV_RES_TYPE_QP ? "MLX_QP_ALLOC_TYPE" :
			   "MLX_SRQ_ALLOC_TYPE";
	const char *value = getenv(name);
	size_t i;

	for (i = 0; value && i < sizeof(alloc_types) / sizeof(alloc_types[0]); i++)
		if (!strcasecmp(value, alloc_types[i].name))
			return &alloc_types[i];
	return &alloc_types[0];
}

static bool chunk_used(const struct rocemu_huge_seg *seg, uint32_t i)
{
	return seg->used[i / 64] >> (i % 64) & 1;
}

static void chunks_mark(struct rocemu_huge_seg *seg, uint32_t first, uint32_t count, bool used)
{
	uint32_t i;

	for (i = first; i < first + count; i++) {
		if (used)
			seg->used[i / 64] |= 1ULL << (i % 64);
		else
			seg->used[i / 64] &= ~(1ULL << (i % 64));
	}
}

/* The first run of count free chunks in seg (bitmap_find_free_region), or nchunks. */
static uint32_t chunks_find(const struct rocemu_huge_seg *seg, uint32_t count)
{
	uint32_t start = 0, i;

	for (i = 0; i < seg->nchunks; i++) {
		if (chunk_used(seg, i))
			start = i + 1;
		else if (i + 1 - start == count)
			return start;
	}
	return seg->nchunks;
}

/* A new segment for length bytes (alloc_huge_mem), or NULL with shmget's or shmat's errno. */
static struct rocemu_huge_seg *huge_seg_new(size_t length)
{
	size_t size = (length + HUGE_SEG_SIZE - 1) & ~(HUGE_SEG_SIZE - 1);
	uint32_t nchunks = (uint32_t)(size / HUGE_CHUNK);
	struct rocemu_huge_seg *seg;
	int shmid, saved;

	seg = calloc(1, sizeof(*seg) + (nchunks + 63) / 64 * sizeof(uint64_t));
	if (!seg)
		return NULL;
	shmid = shmget(IPC_PRIVATE, size, SHM_HUGETLB | SHM_R | SHM_W);
	if (shmid < 0)
		goto err;
	seg->addr = shmat(shmid, NULL, 0);
	saved = errno;
	/* Destroyed once detached. */
	shmctl(shmid, IPC_RMID, NULL);
	errno = saved;
	if (seg->addr == (void *)-1)
		goto err;
	seg->nchunks = nchunks;
	return seg;

err:
	saved = errno;
	free(seg);
	errno = saved;
	return NULL;
}

/* Chunks for length bytes from pool (alloc_huge_buf). Returns 0 or an errno value. */
static int huge_take(struct rocemu_huge_pool *pool, size_t length, struct rocemu_queue_buf *buf)
{
	uint32_t count = (uint32_t)((length + HUGE_CHUNK - 1) / HUGE_CHUNK);
	struct rocemu_huge_seg *seg;
	uint32_t first = 0;

	if (!count)
		return 0;
	pthread_mutex_lock(&pool->lock);
	for (seg = pool->segs; seg; seg = seg->next) {
		first = chunks_find(seg, count);
		if (first < seg->nchunks)
			break;
	}
	if (!seg) {
		seg = huge_seg_new(length);
		if (!seg) {
			pthread_mutex_unlock(&pool->lock);
			return errno;
		}
		first = 0;
		seg->next = pool->segs;
		pool->segs = seg;
	}
	chunks_mark(seg, first, count, true);
	pthread_mutex_unlock(&pool->lock);
	*buf = (struct rocemu_queue_buf){ .pool = pool, .seg = seg, .first = first, .count = count };
	return 0;
}

int rocemu_queue_buf_take(struct rocemu_context *rctx, uint64_t res_type, size_t length,
			  struct rocemu_queue_buf *buf)
{
	const struct alloc_type *type = alloc_type_of(res_type);
	int err = 0;

	*buf = (struct rocemu_queue_buf){ 0 };
	if (type->huge) {
		err = huge_take(&rctx->huge_pool, length, buf);
		if (!err || type->required)
			return err;
	}
	/* No kernel gives contiguous pages: mlx5_ib_mmap's GET_CONTIGUOUS_PAGES is ENOSYS. */
	if (type->contig && type->required)
		return ENOSYS;
	return 0;
}

void rocemu_queue_buf_give(struct rocemu_queue_buf *buf)
{
	struct rocemu_huge_pool *pool = buf->pool;
	struct rocemu_huge_seg **link, *seg = buf->seg;
	uint32_t i;

	if (!seg)
		return;
	pthread_mutex_lock(&pool->lock);
	chunks_mark(seg, buf->first, buf->count, false);
	for (i = 0; i < seg->nchunks && !chunk_used(seg, i); i++)
		;
	if (i == seg->nchunks) {
		for (link = &pool->segs; *link != seg; link = &(*link)->next)
			;
		*link = seg->next;
		shmdt(seg->addr);
		free(seg);
	}
	pthread_mutex_unlock(&pool->lock);
	buf->seg = NULL;
}

void rocemu_huge_pool_init(struct rocemu_huge_pool *pool)
{
	pool->segs = NULL;
	pthread_mutex_init(&pool->lock, NULL);
}
