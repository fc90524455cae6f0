/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Copies by pid that cannot land in another address space.
 * process_vm_readv and process_vm_writev copy once, straight between the
 * two processes; /proc/PID/mem copies through a bounce page, a page at a
 * time (half the bandwidth, a third of the small-message rate here). But
 * they name a process by pid, which another process takes once the first
 * is reaped, and exec gives the same pid new memory.
 *
 * So every such call passes first through the client's guard: one page of
 * a sealed memfd that the client maps shared at a random address where
 * programs map nothing by themselves (lib/mem_proof.c), and that the
 * daemon maps too. A read begins with reading back a token the daemon has
 * just written into the page: one call reaches one address space, and no
 * other holds the token. A write begins with writing a fresh token there:
 * in an address space without a writable page at that address the call
 * fails before its first byte, and afterwards the daemon's own view of
 * the page tells whether the token, and so the bytes, reached the client.
 * Whatever fails is done again through /proc/PID/mem (mm.h), which is
 * then the judge.
 *
 * Only a process of the daemon's own user gets a guard, and only when
 * ROCEMU_DMA is not "mem": for another user's, a page at that address in
 * some other process is no proof, and every copy goes through /proc/PID/mem.
 */
#ifndef ROCEMU_EMULATOR_MM_GUARD_H
#define ROCEMU_EMULATOR_MM_GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "rocemu/ctrl.h"

struct rocemu_mm;

/*
 * Take and prove the guard that proof names, for mm of a process of user
 * uid; without one, or when it does not prove, mm copies through
 * /proc/PID/mem alone.
 */
void rocemu_mm_guard_take(struct rocemu_mm *mm, uid_t uid, const struct rocemu_mem_proof *proof);
void rocemu_mm_guard_drop(struct rocemu_mm *mm);
/*
 * Copy the bytes between local[1..nlocal) and remote[1..nremote), ranges
 * of mm, by pid (both [0] are the guard's; write: into mm). True when
 * every byte moved, in mm's address space; false when the copy is to be
 * made through /proc/PID/mem.
 */
bool rocemu_mm_guard_copy(struct rocemu_mm *mm, struct iovec *local, unsigned int nlocal,
			  struct iovec *remote, unsigned int nremote, size_t bytes, bool write);

#endif /* ROCEMU_EMULATOR_MM_GUARD_H */
