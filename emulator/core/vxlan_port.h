/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * A device's L2 wire between hosts, VXLAN (RFC 7348): the VNI and remote
 * VTEPs ROCEMU_DEVICES gives it, and what emulator/vxlan/ keeps for it:
 * its socket on UDP 4789, the source ports frames leave from, the remote
 * each MAC was last seen behind, and its counters.
 */
#ifndef ROCEMU_EMULATOR_VXLAN_PORT_H
#define ROCEMU_EMULATOR_VXLAN_PORT_H

#include <stdbool.h>
#include <stdint.h>

#define ROCEMU_VXLAN_VNI_MAX 0xffffffu
#define ROCEMU_VXLAN_MAX_REMOTES 8
/* Source ports a device sends from, by a hash of the inner frame (vxlan_wire.c). */
#define ROCEMU_VXLAN_SPORTS 16
/* MACs learned at the most, as Linux bounds its fdb (vxlan_fdb.c). */
#define ROCEMU_VXLAN_FDB_SIZE 256

/* A MAC last seen in a frame from remote, at seen_ns (rocemu_now_ns); seen_ns 0: free. */
struct rocemu_vxlan_fdb_entry {
	uint8_t mac[6];
	uint32_t remote;		/* IPv4, network order */
	uint64_t seen_ns;
};

struct rocemu_vxlan_counters {
	uint64_t tx_frames;
	uint64_t tx_dropped;		/* too big for a datagram, or the loop refused it */
	uint64_t rx_frames;
	uint64_t rx_malformed;		/* short, no I flag, an inner frame too short or long, a group source MAC */
	uint64_t rx_other_vni;		/* a VNI not the device's */
	uint64_t rx_looped;		/* the device's own source MAC */
	uint64_t fdb_learned;		/* MACs learned or moved to another remote */
};

struct rocemu_vxlan_port {
	bool on;
	uint32_t vni;
	unsigned int num_remotes;
	uint32_t remotes[ROCEMU_VXLAN_MAX_REMOTES];	/* IPv4, network order: flooded to */
	int fd;				/* <device address>:4789, -1 when closed */
	int sport_fds[ROCEMU_VXLAN_SPORTS];	/* -1: not open, fd sends instead */
	struct rocemu_vxlan_fdb_entry fdb[ROCEMU_VXLAN_FDB_SIZE];
	struct rocemu_vxlan_counters counters;
};

/* Off, no socket. */
static inline void rocemu_vxlan_port_init(struct rocemu_vxlan_port *v)
{
	*v = (struct rocemu_vxlan_port){ .fd = -1 };
	for (unsigned int i = 0; i < ROCEMU_VXLAN_SPORTS; i++)
		v->sport_fds[i] = -1;
}

#endif /* ROCEMU_EMULATOR_VXLAN_PORT_H */
