/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Real libibverbs functions, found with dlvsym(RTLD_NEXT) on first use
 * (never in a constructor: providers register in theirs): RTLD_NEXT when
 * the program links libibverbs, else the library the program dlopened.
 */
#include "shim.h"

#include <dlfcn.h>
#include <stdlib.h>

#include "rocemu/log.h"

#define IBVERBS_SONAME "libibverbs.so.1"

struct real_symbol {
	const char *name;
	const char *version;
};

#define ROCEMU_REAL_ROW(name, version) [ROCEMU_REAL_##name] = { #name, version },
static const struct real_symbol real_symbols[ROCEMU_REAL__COUNT] = {
	ROCEMU_REAL_FUNCS(ROCEMU_REAL_ROW)
};
#undef ROCEMU_REAL_ROW

static void *real_cache[ROCEMU_REAL__COUNT];

static void *real_lookup(void *where, const struct real_symbol *s)
{
	if (!where)
		return NULL;
	return s->version ? dlvsym(where, s->name, s->version) : dlsym(where, s->name);
}

/* libibverbs as loaded (or loaded now); the handle is kept for the process's life. */
static void *ibverbs_handle(void)
{
	static void *handle;
	void *h = __atomic_load_n(&handle, __ATOMIC_ACQUIRE);

	if (!h) {
		h = dlopen(IBVERBS_SONAME, RTLD_NOW);
		__atomic_store_n(&handle, h, __ATOMIC_RELEASE);
	}
	return h;
}

void *rocemu_real(enum rocemu_real_fn fn)
{
	const struct real_symbol *s = &real_symbols[fn];
	/* Racing resolvers store the same value, so a lost race is harmless. */
	void *p = __atomic_load_n(&real_cache[fn], __ATOMIC_ACQUIRE);

	if (p)
		return p;
	p = real_lookup(RTLD_NEXT, s);
	/* A program that dlopens libibverbs (UCX, MPI) has it outside the scope RTLD_NEXT searches. */
	if (!p)
		p = real_lookup(ibverbs_handle(), s);
	if (!p) {
		rocemu_log(ROCEMU_LOG_ERROR, "libibverbs has no %s%s%s", s->name,
			   s->version ? "@" : "", s->version ? s->version : "");
		abort();
	}
	__atomic_store_n(&real_cache[fn], p, __ATOMIC_RELEASE);
	return p;
}
