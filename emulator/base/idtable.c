/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/base/idtable.h"

#include <errno.h>
#include <stdlib.h>

void rocemu_idtable_init(struct rocemu_idtable *t, uint32_t first, uint32_t max)
{
	*t = (struct rocemu_idtable){ .first = first, .max = max };
}

void rocemu_idtable_init_cyclic(struct rocemu_idtable *t, uint32_t first, uint32_t max)
{
	*t = (struct rocemu_idtable){ .first = first, .max = max, .cyclic = true };
}

void rocemu_idtable_free(struct rocemu_idtable *t)
{
	free(t->slots);
	*t = (struct rocemu_idtable){ .first = t->first, .max = t->max, .cyclic = t->cyclic };
}

static int idtable_grow(struct rocemu_idtable *t)
{
	uint32_t cap = t->cap ? t->cap * 2 : 64, i;
	void **slots;

	if (cap > t->max)
		cap = t->max;
	if (cap <= t->cap)
		return -ENOMEM;
	slots = realloc(t->slots, cap * sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (i = t->cap; i < cap; i++)
		slots[i] = NULL;
	t->cursor = t->cap;	/* the new slots are free */
	t->slots = slots;
	t->cap = cap;
	return 0;
}

int rocemu_idtable_alloc(struct rocemu_idtable *t, void *obj, uint32_t *id)
{
	bool at_end = t->cyclic && t->cursor >= t->cap;
	uint32_t n;

	/* Grow while half full so next-fit keeps finding free slots quickly;
	 * a cyclic table also grows when its cursor has passed every slot. */
	if ((t->used * 2 >= t->cap || at_end) && t->cap < t->max && idtable_grow(t) &&
	    t->used == t->cap)
		return -ENOMEM;
	if (t->used == t->cap)
		return -ENOMEM;
	if (t->cursor >= t->cap)
		t->cursor = 0;
	for (n = 0; n < t->cap; n++) {
		uint32_t slot = (t->cursor + n) % t->cap;

		if (!t->slots[slot]) {
			t->slots[slot] = obj;
			t->used++;
			t->cursor = t->cyclic ? slot + 1 : (slot + 1) % t->cap;
			*id = t->first + slot;
			return 0;
		}
	}
	return -ENOMEM;
}

void rocemu_idtable_remove(struct rocemu_idtable *t, uint32_t id)
{
	if (rocemu_idtable_get(t, id)) {
		t->slots[id - t->first] = NULL;
		t->used--;
	}
}
