/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A circular doubly linked list embedded in its elements (as in the kernel). */
#ifndef ROCEMU_EMULATOR_LIST_H
#define ROCEMU_EMULATOR_LIST_H

#include <stddef.h>

struct rocemu_list {
	struct rocemu_list *next, *prev;
};

#define rocemu_container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

static inline void rocemu_list_init(struct rocemu_list *head)
{
	head->next = head->prev = head;
}

static inline int rocemu_list_empty(const struct rocemu_list *head)
{
	return head->next == head;
}

static inline void rocemu_list_add_tail(struct rocemu_list *head, struct rocemu_list *node)
{
	node->prev = head->prev;
	node->next = head;
	head->prev->next = node;
	head->prev = node;
}

static inline void rocemu_list_del(struct rocemu_list *node)
{
	node->prev->next = node->next;
	node->next->prev = node->prev;
	node->next = node->prev = node;
}

/* Iterate over the elements of type of a list; safe against removing pos. */
#define rocemu_list_for_each_safe(pos, tmp, head, type, member) \
	for (pos = rocemu_container_of((head)->next, type, member), \
	     tmp = rocemu_container_of(pos->member.next, type, member); \
	     &pos->member != (head); \
	     pos = tmp, tmp = rocemu_container_of(pos->member.next, type, member))

#define rocemu_list_for_each(pos, head, type, member) \
	for (pos = rocemu_container_of((head)->next, type, member); \
	     &pos->member != (head); \
	     pos = rocemu_container_of(pos->member.next, type, member))

#endif /* ROCEMU_EMULATOR_LIST_H */
