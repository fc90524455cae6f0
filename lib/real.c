/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Real libibverbs functions, found with dlvsym(RTLD_NEXT) on first use
 * (never in a constructor: providers register in theirs). The shim links
 * libibverbs, so RTLD_NEXT finds it even when the program dlopens it.
 */
#include "shim.h"

#include <dlfcn.h>
#include <stdlib.h>

#include "rocemu/log.h"

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

void *rocemu_real(enum rocemu_real_fn fn)
{
	const struct real_symbol *s = &real_symbols[fn];
	/* Racing resolvers store the same value, so a lost race is harmless. */
	void *p = __atomic_load_n(&real_cache[fn], __ATOMIC_ACQUIRE);

	if (p)
		return p;
	p = s->version ? dlvsym(RTLD_NEXT, s->name, s->version) : dlsym(RTLD_NEXT, s->name);
	if (!p) {
		rocemu_log(ROCEMU_LOG_ERROR, "libibverbs has no %s%s%s", s->name,
			   s->version ? "@" : "", s->version ? s->version : "");
		abort();
	}
	__atomic_store_n(&real_cache[fn], p, __ATOMIC_RELEASE);
	return p;
}
