/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Handle tables: small integer ids (first .. first + max - 1) mapping to
 * objects in O(1). Ids are handed out next-fit so a freed id is not reused
 * at once (a late packet or a stale handle then misses instead of hitting
 * a new object): the search wraps at the slots allocated so far. A cyclic
 * table's search goes on past them, growing the table (to max slots in the
 * end), and wraps only at max: a freed id comes back once the search has
 * gone round the whole range, as NICs hand out QP numbers.
 */
#ifndef ROCEMU_EMULATOR_IDTABLE_H
#define ROCEMU_EMULATOR_IDTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rocemu_idtable {
	void **slots;
	uint32_t first;		/* id of slots[0] */
	uint32_t max;		/* most ids ever */
	uint32_t cap;		/* allocated slots */
	uint32_t used;
	uint32_t cursor;	/* next slot to try */
	bool cyclic;		/* the cursor wraps at max, not at cap */
};

void rocemu_idtable_init(struct rocemu_idtable *t, uint32_t first, uint32_t max);
void rocemu_idtable_init_cyclic(struct rocemu_idtable *t, uint32_t first, uint32_t max);
void rocemu_idtable_free(struct rocemu_idtable *t);
/* Store obj under a new id. Returns 0, or -ENOMEM when full or out of memory. */
int rocemu_idtable_alloc(struct rocemu_idtable *t, void *obj, uint32_t *id);
/* The object of id, or NULL: inline, as every packet and key looks up this way. */
static inline void *rocemu_idtable_get(const struct rocemu_idtable *t, uint32_t id)
{
	if (id < t->first || id - t->first >= t->cap)
		return NULL;
	return t->slots[id - t->first];
}
void rocemu_idtable_remove(struct rocemu_idtable *t, uint32_t id);

#endif /* ROCEMU_EMULATOR_IDTABLE_H */
