/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/core/object.h"

#include <string.h>

static struct rocemu_idtable *kind_table(struct rocemu_emu *emu, const struct rocemu_obj_kind *k)
{
	return (struct rocemu_idtable *)((char *)emu + k->table);
}

static struct rocemu_list *owner_list(void *owner, const struct rocemu_obj_kind *k)
{
	return (struct rocemu_list *)((char *)owner + k->list);
}

static struct rocemu_list *obj_node(void *obj, const struct rocemu_obj_kind *k)
{
	return (struct rocemu_list *)((char *)obj + k->node);
}

static uint32_t *obj_id(void *obj, const struct rocemu_obj_kind *k)
{
	return (uint32_t *)((char *)obj + k->id);
}

/* The owner field is a typed pointer of the kind's owner record: copied as bytes, not aliased. */
static void *obj_owner(const void *obj, const struct rocemu_obj_kind *k)
{
	void *owner;

	memcpy(&owner, (const char *)obj + k->owner, sizeof(owner));
	return owner;
}

static void obj_set_owner(void *obj, const struct rocemu_obj_kind *k, void *owner)
{
	memcpy((char *)obj + k->owner, &owner, sizeof(owner));
}

void rocemu_obj_tables_init(struct rocemu_emu *emu, const struct rocemu_obj_kind *const *kinds,
			    size_t nkinds)
{
	size_t i;

	for (i = 0; i < nkinds; i++) {
		const struct rocemu_obj_kind *k = kinds[i];

		if (k->cyclic)
			rocemu_idtable_init_cyclic(kind_table(emu, k), k->first, k->max);
		else
			rocemu_idtable_init(kind_table(emu, k), k->first, k->max);
	}
}

void rocemu_obj_tables_free(struct rocemu_emu *emu, const struct rocemu_obj_kind *const *kinds,
			    size_t nkinds)
{
	size_t i;

	for (i = 0; i < nkinds; i++)
		rocemu_idtable_free(kind_table(emu, kinds[i]));
}

int rocemu_obj_add(struct rocemu_emu *emu, const struct rocemu_obj_kind *k, void *owner, void *obj)
{
	int err = rocemu_idtable_alloc(kind_table(emu, k), obj, obj_id(obj, k));

	if (err)
		return err;
	obj_set_owner(obj, k, owner);
	rocemu_list_add_tail(owner_list(owner, k), obj_node(obj, k));
	return 0;
}

int rocemu_obj_renumber(struct rocemu_emu *emu, const struct rocemu_obj_kind *k, void *obj)
{
	uint32_t id;
	int err = rocemu_idtable_alloc(kind_table(emu, k), obj, &id);

	if (err)
		return err;
	rocemu_idtable_remove(kind_table(emu, k), *obj_id(obj, k));
	*obj_id(obj, k) = id;
	return 0;
}

void *rocemu_obj_lookup(struct rocemu_emu *emu, const struct rocemu_obj_kind *k,
			const void *owner, uint32_t id)
{
	void *obj = rocemu_idtable_get(kind_table(emu, k), id);

	return obj && obj_owner(obj, k) == owner ? obj : NULL;
}

void rocemu_obj_remove(struct rocemu_emu *emu, const struct rocemu_obj_kind *k, void *obj)
{
	rocemu_idtable_remove(kind_table(emu, k), *obj_id(obj, k));
	rocemu_list_del(obj_node(obj, k));
}

void rocemu_obj_move(const struct rocemu_obj_kind *k, void *obj, void *owner)
{
	obj_set_owner(obj, k, owner);
	rocemu_list_del(obj_node(obj, k));
	rocemu_list_add_tail(owner_list(owner, k), obj_node(obj, k));
}

void rocemu_objs_release(struct rocemu_emu *emu, void *owner,
			 const struct rocemu_obj_kind *const *kinds, size_t nkinds)
{
	size_t i;

	for (i = 0; i < nkinds; i++) {
		struct rocemu_list *list = owner_list(owner, kinds[i]);

		/* The first each time: a free may have taken the next with it. */
		while (!rocemu_list_empty(list))
			kinds[i]->free(emu, (char *)list->next - kinds[i]->node);
	}
}
