/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Thread domains and parent domains, userspace objects as in mlx5
 * (mlx5_alloc_td, mlx5_alloc_parent_domain): the daemon never hears of
 * them. A parent domain is a PD to every verb, carrying its PD's pdn; its
 * allocators are called for the buffers mlx5 takes from them, which the
 * resource holds for its life while its rings stay in the daemon's memfd.
 */
#include "lib/shim.h"

#include <stdlib.h>
#include <unistd.h>

#include "rocemu/log.h"

#define PARENT_DOMAIN_COMP_MASK \
	((uint32_t)(IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS | IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT))

/* mlx5_alloc_dbrec asks its allocator for this much, so aligned. */
#define DBR_SIZE 8

static void hold(uint32_t *holders)
{
	__atomic_fetch_add(holders, 1, __ATOMIC_RELAXED);
}

static void release(uint32_t *holders)
{
	__atomic_fetch_sub(holders, 1, __ATOMIC_RELAXED);
}

static bool held(const uint32_t *holders)
{
	return __atomic_load_n(holders, __ATOMIC_RELAXED) != 0;
}

struct ibv_td *rocemu_alloc_td_op(struct ibv_context *context, struct ibv_td_init_attr *init_attr)
{
	struct rocemu_td *td;

	if (init_attr->comp_mask) {
		errno = EINVAL;
		return NULL;
	}
	td = calloc(1, sizeof(*td));
	if (!td) {
		errno = ENOMEM;
		return NULL;
	}
	td->ibtd.context = context;
	return &td->ibtd;
}

int rocemu_dealloc_td_op(struct ibv_td *ibtd)
{
	struct rocemu_td *td = to_rtd(ibtd);

	if (held(&td->holders))
		return EBUSY;
	free(td);
	return 0;
}

struct ibv_pd *rocemu_alloc_parent_domain_op(struct ibv_context *context,
					     struct ibv_parent_domain_init_attr *attr)
{
	struct rocemu_parent_domain *domain;
	struct rocemu_pd *pd;

	/* ibv_check_alloc_parent_domain, then mlx5's comp_mask check. */
	if (!attr->pd || (attr->comp_mask & ~PARENT_DOMAIN_COMP_MASK) ||
	    attr->pd->context != context || (attr->td && attr->td->context != context)) {
		errno = EINVAL;
		return NULL;
	}
	domain = calloc(1, sizeof(*domain));
	if (!domain) {
		errno = ENOMEM;
		return NULL;
	}
	pd = to_rpd(attr->pd);
	hold(&pd->holders);
	if (attr->td) {
		domain->td = to_rtd(attr->td);
		hold(&domain->td->holders);
	}
	domain->rpd.protection_domain = pd;
	domain->rpd.pdn = pd->pdn;
	/* ibv_initialize_parent_domain: interchangeable with its PD for the core. */
	domain->rpd.ibpd.context = context;
	domain->rpd.ibpd.handle = pd->ibpd.handle;
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) {
		domain->alloc = attr->alloc;
		domain->free = attr->free;
	}
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)
		domain->pd_context = attr->pd_context;
	rocemu_log(ROCEMU_LOG_DEBUG, "%s parent domain on pd %u%s%s", to_rctx(context)->info.name,
		   pd->pdn, domain->td ? " with a thread domain" : "",
		   domain->alloc ? " with allocators" : "");
	return &domain->rpd.ibpd;
}

int rocemu_parent_domain_dealloc(struct rocemu_parent_domain *domain)
{
	if (held(&domain->rpd.holders))
		return EBUSY;
	release(&domain->rpd.protection_domain->holders);
	if (domain->td)
		release(&domain->td->holders);
	free(domain);
	return 0;
}

/* One allocation as mlx5_alloc_buf_custom makes it: NULL for the default, ENOMEM for none. */
static int custom_alloc(struct rocemu_parent_domain *domain, size_t size, size_t alignment,
			uint64_t type, void **out)
{
	void *p = domain->alloc(&domain->rpd.ibpd, domain->pd_context, size, alignment, type);

	*out = NULL;
	if (p == IBV_ALLOCATOR_USE_DEFAULT)
		return 0;
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

static void custom_free(struct rocemu_parent_domain *domain, void *p, uint64_t type)
{
	if (p)
		domain->free(&domain->rpd.ibpd, domain->pd_context, p, type);
}

int rocemu_domain_res_take(struct rocemu_domain_res *res, struct ibv_context *context,
			   struct ibv_pd *pd, uint64_t type, size_t size)
{
	struct rocemu_parent_domain *domain = pd ? to_rparent_domain(pd) : NULL;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	int err;

	*res = (struct rocemu_domain_res){ .type = type };
	/* mlx5_is_custom_alloc: both functions, or the default allocator for all. */
	if (domain && domain->alloc && domain->free) {
		err = custom_alloc(domain, (size + page - 1) & ~(page - 1), page, type, &res->buf);
		if (err)
			return err;
		err = custom_alloc(domain, DBR_SIZE, DBR_SIZE, MLX5DV_RES_TYPE_DBR, &res->dbr);
		if (err) {
			custom_free(domain, res->buf, type);
			return err;
		}
	} else {
		/* A custom allocator's IBV_ALLOCATOR_USE_DEFAULT is mlx5's ANON, never the env's. */
		err = rocemu_queue_buf_take(to_rctx(context), type, size, &res->queue_buf);
		if (err)
			return err;
	}
	if (domain) {
		hold(&domain->rpd.holders);
		res->domain = domain;
	}
	return 0;
}

void rocemu_domain_res_give(struct rocemu_domain_res *res)
{
	rocemu_queue_buf_give(&res->queue_buf);
	if (!res->domain)
		return;
	custom_free(res->domain, res->dbr, MLX5DV_RES_TYPE_DBR);
	custom_free(res->domain, res->buf, res->type);
	release(&res->domain->rpd.holders);
	res->domain = NULL;
}
