/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The life every verbs object shares: an id from its kind's handle table
 * in the emulator record, an owner (a client, a ufile, an rdma_cm file)
 * whose list of that kind holds it, and a free function. A kind says
 * where these live in its objects and records and how its ids are handed
 * out; here the tables are made, objects numbered and linked, found by id
 * for their owner only, handed to another owner, and an owner's objects
 * released kind by kind in the order it gives.
 */
#ifndef ROCEMU_EMULATOR_OBJECT_H
#define ROCEMU_EMULATOR_OBJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "emulator/core/emu.h"

struct rocemu_obj_kind {
	size_t table;	/* offsetof(struct rocemu_emu, the id table) */
	size_t list;	/* offset of the owner record's list of this kind */
	size_t owner;	/* offset of the object's owner pointer */
	size_t id;	/* offset of the object's uint32_t id */
	size_t node;	/* offset of the object's struct rocemu_list in the owner's list */
	uint32_t first, max;	/* its ids: first .. first + max - 1 */
	bool cyclic;	/* ids go round the whole range before one comes back (idtable.h) */
	/* Its owner goes: obj leaves the owner's list (removed, or moved to a holder that stays). */
	void (*free)(struct rocemu_emu *emu, void *obj);
};

/*
 * Define kind NAME of TYPE owned by OWNER_TYPE: numbered in emu->TABLE,
 * held in OWNER_TYPE's LIST through the object's NODE, its OWNER and ID
 * fields set here, FREE_FN(emu, TYPE *) its free function; the rest are
 * its ids' initializers (.first, .max, .cyclic). The compiler checks each
 * field's type.
 */
#define ROCEMU_OBJ_KIND(NAME, TYPE, OWNER_TYPE, TABLE, LIST, OWNER, ID, NODE, FREE_FN, ...)     \
	_Static_assert(__builtin_types_compatible_p(__typeof__(((struct rocemu_emu *)0)->TABLE), \
						    struct rocemu_idtable), "emu." #TABLE);      \
	_Static_assert(__builtin_types_compatible_p(__typeof__(((TYPE *)0)->OWNER),            \
						    OWNER_TYPE *), #TYPE "." #OWNER);            \
	_Static_assert(__builtin_types_compatible_p(__typeof__(((TYPE *)0)->ID), uint32_t),   \
		       #TYPE "." #ID);                                                          \
	_Static_assert(__builtin_types_compatible_p(__typeof__(((TYPE *)0)->NODE),            \
						    struct rocemu_list), #TYPE "." #NODE);        \
	_Static_assert(__builtin_types_compatible_p(__typeof__(((OWNER_TYPE *)0)->LIST),      \
						    struct rocemu_list), #OWNER_TYPE "." #LIST);  \
	static void NAME##_free(struct rocemu_emu *kind_emu, void *kind_obj)                     \
	{                                                                                        \
		FREE_FN(kind_emu, (TYPE *)kind_obj);                                             \
	}                                                                                        \
	const struct rocemu_obj_kind NAME = {                                                    \
		.table = offsetof(struct rocemu_emu, TABLE),                                     \
		.list = offsetof(OWNER_TYPE, LIST), .owner = offsetof(TYPE, OWNER),              \
		.id = offsetof(TYPE, ID), .node = offsetof(TYPE, NODE), .free = NAME##_free,     \
		__VA_ARGS__                                                                      \
	}

/* Make, or free, the handle tables of kinds in emu. */
void rocemu_obj_tables_init(struct rocemu_emu *emu, const struct rocemu_obj_kind *const *kinds,
			    size_t nkinds);
void rocemu_obj_tables_free(struct rocemu_emu *emu, const struct rocemu_obj_kind *const *kinds,
			    size_t nkinds);
/* Give obj an id of its kind's table and link it to owner. 0, or -ENOMEM when the table is full. */
int rocemu_obj_add(struct rocemu_emu *emu, const struct rocemu_obj_kind *k, void *owner, void *obj);
/* A new id for obj; its old one is given back after, so it is not the one handed out. */
int rocemu_obj_renumber(struct rocemu_emu *emu, const struct rocemu_obj_kind *k, void *obj);
/* The object of kind k numbered id if owner holds it, else NULL (another's is not named). */
void *rocemu_obj_lookup(struct rocemu_emu *emu, const struct rocemu_obj_kind *k,
			const void *owner, uint32_t id);
/* obj's id is given back and it leaves its owner's list. */
void rocemu_obj_remove(struct rocemu_emu *emu, const struct rocemu_obj_kind *k, void *obj);
/* obj, keeping its id, belongs to owner from now on. */
void rocemu_obj_move(const struct rocemu_obj_kind *k, void *obj, void *owner);
/*
 * Free every object of owner, kind by kind in the order of kinds (users
 * before what they use). A free may take others of the same list with it.
 */
void rocemu_objs_release(struct rocemu_emu *emu, void *owner,
			 const struct rocemu_obj_kind *const *kinds, size_t nkinds);

#endif /* ROCEMU_EMULATOR_OBJECT_H */
