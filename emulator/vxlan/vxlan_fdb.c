/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/vxlan/vxlan_fdb.h"

#include <stdbool.h>
#include <string.h>

/* Slots a MAC may sit in, from its home slot on. */
#define FDB_PROBE 8

static unsigned int home_slot(const uint8_t mac[6])
{
	uint32_t h = 2166136261u;

	for (int i = 0; i < 6; i++)
		h = (h ^ mac[i]) * 16777619u;
	return (h ^ (h >> 16)) % ROCEMU_VXLAN_FDB_SIZE;
}

static bool live(const struct rocemu_vxlan_fdb_entry *e, uint64_t now_ns)
{
	return e->seen_ns && now_ns - e->seen_ns < ROCEMU_VXLAN_FDB_AGE_NS;
}

/* The slot holding mac, -1 when none does. */
static int find(const struct rocemu_vxlan_port *v, const uint8_t mac[6])
{
	unsigned int home = home_slot(mac);

	for (unsigned int i = 0; i < FDB_PROBE; i++) {
		unsigned int slot = (home + i) % ROCEMU_VXLAN_FDB_SIZE;

		if (v->fdb[slot].seen_ns && !memcmp(v->fdb[slot].mac, mac, 6))
			return (int)slot;
	}
	return -1;
}

void rocemu_vxlan_fdb_learn(struct rocemu_vxlan_port *v, const uint8_t mac[6], uint32_t remote,
			    uint64_t now_ns)
{
	int slot = find(v, mac);
	struct rocemu_vxlan_fdb_entry *e = slot < 0 ? NULL : &v->fdb[slot];
	unsigned int home = home_slot(mac);
	bool found = e != NULL;

	/* Otherwise a free or aged slot, else the one seen longest ago. */
	for (unsigned int i = 0; !found && i < FDB_PROBE; i++) {
		struct rocemu_vxlan_fdb_entry *c = &v->fdb[(home + i) % ROCEMU_VXLAN_FDB_SIZE];

		if (!live(c, now_ns)) {
			e = c;
			found = true;
		}
	}
	for (unsigned int i = 0; !found && i < FDB_PROBE; i++) {
		struct rocemu_vxlan_fdb_entry *c = &v->fdb[(home + i) % ROCEMU_VXLAN_FDB_SIZE];

		if (!e || c->seen_ns < e->seen_ns)
			e = c;
	}
	if (!e->seen_ns || e->remote != remote || memcmp(e->mac, mac, sizeof(e->mac)))
		v->counters.fdb_learned++;
	memcpy(e->mac, mac, sizeof(e->mac));
	e->remote = remote;
	e->seen_ns = now_ns ? now_ns : 1;	/* 0 marks a free slot */
}

uint32_t rocemu_vxlan_fdb_lookup(const struct rocemu_vxlan_port *v, const uint8_t mac[6],
				 uint64_t now_ns)
{
	int slot = find(v, mac);

	return slot >= 0 && live(&v->fdb[slot], now_ns) ? v->fdb[slot].remote : 0;
}

unsigned int rocemu_vxlan_fdb_live(const struct rocemu_vxlan_port *v, uint64_t now_ns)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < ROCEMU_VXLAN_FDB_SIZE; i++)
		n += live(&v->fdb[i], now_ns);
	return n;
}
