/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The object layer (emulator/core/object.c): ids from the tables it makes
 * as the kinds say (next-fit, cyclic for QP numbers), an owner's objects found by it alone,
 * handed to another owner, renumbered, and released kind by kind in the
 * order given, even when a free takes another of the same list with it.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>

#include "emulator/core/object.h"

#define FIRST_QPN 0x100u
#define TABLE_MAX 4u
#define MAX_FREED 16

struct owner {
	struct rocemu_list things, widgets;
};

/* Its fields in another order than a widget's: the kind says where each is. */
struct thing {
	struct owner *owner;
	struct rocemu_list node;
	uint32_t qpn;
	struct thing *partner;		/* freed with it when set */
};

struct widget {
	uint32_t handle;
	struct rocemu_list link;
	struct owner *holder;
};

static struct rocemu_emu emu;
static struct owner alice, bob;
static const void *freed[MAX_FREED];	/* in the order the kinds' free functions ran */
static unsigned int nfreed;

static void thing_free(struct rocemu_emu *e, struct thing *t);
static void widget_free(struct rocemu_emu *e, struct widget *w);

/* Things are numbered as QPs are, cyclic; widgets as CQs, next-fit. */
ROCEMU_OBJ_KIND(thing_kind, struct thing, struct owner, qps, things, owner, qpn, node, thing_free,
		.first = FIRST_QPN, .max = TABLE_MAX, .cyclic = true);
ROCEMU_OBJ_KIND(widget_kind, struct widget, struct owner, cqs, widgets, holder, handle, link,
		widget_free, .first = 1, .max = TABLE_MAX);

static void thing_free(struct rocemu_emu *e, struct thing *t)
{
	struct thing *partner = t->partner;

	rocemu_obj_remove(e, &thing_kind, t);
	freed[nfreed++] = t;
	free(t);
	if (partner)
		thing_free(e, partner);
}

static void widget_free(struct rocemu_emu *e, struct widget *w)
{
	rocemu_obj_remove(e, &widget_kind, w);
	freed[nfreed++] = w;
	free(w);
}

static struct thing *thing_new(struct owner *o)
{
	struct thing *t = calloc(1, sizeof(*t));

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(rocemu_obj_add(&emu, &thing_kind, o, t), 0);
	return t;
}

static struct widget *widget_new(struct owner *o)
{
	struct widget *w = calloc(1, sizeof(*w));

	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(rocemu_obj_add(&emu, &widget_kind, o, w), 0);
	return w;
}

static const struct rocemu_obj_kind *const order[] = { &thing_kind, &widget_kind };

static void release(struct owner *o)
{
	rocemu_objs_release(&emu, o, order, 2);
}

static void setup(void)
{
	rocemu_obj_tables_init(&emu, order, 2);
	rocemu_list_init(&alice.things);
	rocemu_list_init(&alice.widgets);
	rocemu_list_init(&bob.things);
	rocemu_list_init(&bob.widgets);
	nfreed = 0;
}

static void teardown(void)
{
	release(&alice);
	release(&bob);
	rocemu_obj_tables_free(&emu, order, 2);
}

START_TEST(test_add_numbers_and_links)
{
	struct thing *t = thing_new(&alice);
	struct widget *w = widget_new(&alice), *w2 = widget_new(&alice);

	ck_assert_uint_eq(t->qpn, FIRST_QPN);
	ck_assert_ptr_eq(t->owner, &alice);
	ck_assert_uint_eq(w->handle, 1);
	ck_assert_uint_eq(w2->handle, 2);
	ck_assert_ptr_eq(w->holder, &alice);
	ck_assert_ptr_eq(alice.things.next, &t->node);
	ck_assert_ptr_eq(alice.widgets.next, &w->link);
	ck_assert_ptr_eq(w->link.next, &w2->link);
}
END_TEST

/* A client names only its own objects: another's id is as unknown as a free one. */
START_TEST(test_lookup_by_owner_only)
{
	struct widget *w = widget_new(&alice);

	ck_assert_ptr_eq(rocemu_obj_lookup(&emu, &widget_kind, &alice, w->handle), w);
	ck_assert_ptr_null(rocemu_obj_lookup(&emu, &widget_kind, &bob, w->handle));
	ck_assert_ptr_null(rocemu_obj_lookup(&emu, &widget_kind, &alice, w->handle + 1));
	ck_assert_ptr_null(rocemu_obj_lookup(&emu, &widget_kind, &alice, 0));
	/* Same id, other kind: the tables are apart. */
	ck_assert_ptr_null(rocemu_obj_lookup(&emu, &thing_kind, &alice, w->handle));
}
END_TEST

/* A removed object is gone from table and list, and its id does not come back at once. */
START_TEST(test_remove_next_fit)
{
	struct widget *w = widget_new(&alice);
	uint32_t id = w->handle;

	widget_free(&emu, w);
	ck_assert(rocemu_list_empty(&alice.widgets));
	ck_assert_ptr_null(rocemu_obj_lookup(&emu, &widget_kind, &alice, id));
	ck_assert_uint_eq(widget_new(&alice)->handle, id + 1);
}
END_TEST

/* QP numbers go round the whole range before one is reused. */
START_TEST(test_cyclic_kind)
{
	uint32_t i;

	for (i = 0; i < TABLE_MAX; i++) {
		struct thing *t = thing_new(&alice);

		ck_assert_uint_eq(t->qpn, FIRST_QPN + i);
		thing_free(&emu, t);
	}
	ck_assert_uint_eq(thing_new(&alice)->qpn, FIRST_QPN);
}
END_TEST

/* A full table: -ENOMEM, and the object is neither numbered nor linked. */
START_TEST(test_full_table)
{
	struct widget extra = { .holder = NULL };
	uint32_t i;

	for (i = 0; i < TABLE_MAX; i++)
		widget_new(&alice);
	ck_assert_int_eq(rocemu_obj_add(&emu, &widget_kind, &bob, &extra), -ENOMEM);
	ck_assert_ptr_null(extra.holder);
	ck_assert(rocemu_list_empty(&bob.widgets));
}
END_TEST

START_TEST(test_renumber)
{
	struct widget *w = widget_new(&alice);
	uint32_t old = w->handle;

	ck_assert_int_eq(rocemu_obj_renumber(&emu, &widget_kind, w), 0);
	ck_assert_uint_ne(w->handle, old);
	ck_assert_ptr_null(rocemu_obj_lookup(&emu, &widget_kind, &alice, old));
	ck_assert_ptr_eq(rocemu_obj_lookup(&emu, &widget_kind, &alice, w->handle), w);
}
END_TEST

/* Handed over, an object keeps its id and is the new owner's alone, released with it. */
START_TEST(test_move)
{
	struct thing *t = thing_new(&alice);
	uint32_t qpn = t->qpn;

	rocemu_obj_move(&thing_kind, t, &bob);
	ck_assert_uint_eq(t->qpn, qpn);
	ck_assert_ptr_null(rocemu_obj_lookup(&emu, &thing_kind, &alice, qpn));
	ck_assert_ptr_eq(rocemu_obj_lookup(&emu, &thing_kind, &bob, qpn), t);
	ck_assert(rocemu_list_empty(&alice.things));
	release(&alice);
	ck_assert_uint_eq(nfreed, 0);
	release(&bob);
	ck_assert_uint_eq(nfreed, 1);
}
END_TEST

/* Kind by kind in the order given, each list oldest first; the other owner's stay. */
START_TEST(test_release_in_kind_order)
{
	struct widget *w = widget_new(&alice);
	struct thing *t1 = thing_new(&alice), *t2 = thing_new(&alice);
	struct thing *kept = thing_new(&bob);

	release(&alice);
	ck_assert_uint_eq(nfreed, 3);
	ck_assert_ptr_eq(freed[0], t1);
	ck_assert_ptr_eq(freed[1], t2);
	ck_assert_ptr_eq(freed[2], w);
	ck_assert(rocemu_list_empty(&alice.things));
	ck_assert(rocemu_list_empty(&alice.widgets));
	ck_assert_ptr_eq(rocemu_obj_lookup(&emu, &thing_kind, &bob, kept->qpn), kept);
}
END_TEST

/* A free that takes the next of the list with it (a listener its requests) trips no walk. */
START_TEST(test_release_when_free_takes_next)
{
	struct thing *t1 = thing_new(&alice), *t2 = thing_new(&alice), *t3 = thing_new(&alice);

	t1->partner = t2;
	release(&alice);
	ck_assert_uint_eq(nfreed, 3);
	ck_assert_ptr_eq(freed[0], t1);
	ck_assert_ptr_eq(freed[1], t2);
	ck_assert_ptr_eq(freed[2], t3);
}
END_TEST

static Suite *object_suite(void)
{
	Suite *s = suite_create("object");
	TCase *tc = tcase_create("object");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_add_numbers_and_links);
	tcase_add_test(tc, test_lookup_by_owner_only);
	tcase_add_test(tc, test_remove_next_fit);
	tcase_add_test(tc, test_cyclic_kind);
	tcase_add_test(tc, test_full_table);
	tcase_add_test(tc, test_renumber);
	tcase_add_test(tc, test_move);
	tcase_add_test(tc, test_release_in_kind_order);
	tcase_add_test(tc, test_release_when_free_takes_next);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(object_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
