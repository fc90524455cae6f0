/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Real libibverbs (and libmlx5, libmlx4 direct-verbs) functions, found
 * with dlvsym(RTLD_NEXT) on first use (never in a constructor: providers
 * register in theirs): RTLD_NEXT when the program links the library, else
 * the library the program dlopened.
 */
#include "lib/shim.h"

#include <dlfcn.h>
#include <stdlib.h>

#include "rocemu/log.h"

enum real_library { IBVERBS, MLX5, MLX4, REAL_LIBRARY__COUNT };

static const char *const real_sonames[REAL_LIBRARY__COUNT] = {
	[IBVERBS] = "libibverbs.so.1", [MLX5] = "libmlx5.so.1", [MLX4] = "libmlx4.so.1",
};

struct real_symbol {
	const char *name;
	const char *version;
	enum real_library lib;
};

#define ROCEMU_REAL_ROW(name, version) [ROCEMU_REAL_##name] = { #name, version, IBVERBS },
#define ROCEMU_REAL_DV_ROW(name, version, lib) [ROCEMU_REAL_##name] = { #name, version, lib },
static const struct real_symbol real_symbols[ROCEMU_REAL__COUNT] = {
	ROCEMU_REAL_FUNCS(ROCEMU_REAL_ROW)
	ROCEMU_REAL_DV_FUNCS(ROCEMU_REAL_DV_ROW)
};
#undef ROCEMU_REAL_DV_ROW
#undef ROCEMU_REAL_ROW

static void *real_cache[ROCEMU_REAL__COUNT];

static void *real_lookup(void *where, const struct real_symbol *s)
{
	if (!where)
		return NULL;
	return s->version ? dlvsym(where, s->name, s->version) : dlsym(where, s->name);
}

/* The library as loaded (or loaded now); the handle is kept for the process's life. */
static void *library_handle(enum real_library lib)
{
	static void *handles[REAL_LIBRARY__COUNT];
	void *h = __atomic_load_n(&handles[lib], __ATOMIC_ACQUIRE);

	if (!h) {
		h = dlopen(real_sonames[lib], RTLD_NOW);
		__atomic_store_n(&handles[lib], h, __ATOMIC_RELEASE);
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
		p = real_lookup(library_handle(s->lib), s);
	if (!p) {
		rocemu_log(ROCEMU_LOG_ERROR, "%s has no %s%s%s", real_sonames[s->lib], s->name,
			   s->version ? "@" : "", s->version ? s->version : "");
		abort();
	}
	__atomic_store_n(&real_cache[fn], p, __ATOMIC_RELEASE);
	return p;
}
