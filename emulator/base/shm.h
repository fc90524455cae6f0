/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Shared memory the daemon creates and a client maps: a memfd sized to a
 * page multiple, mapped MAP_SHARED here. The fd goes to the client once
 * (SCM_RIGHTS); the daemon keeps only the mapping. Its size is sealed
 * first (F_SEAL_SHRINK, F_SEAL_GROW, F_SEAL_SEAL): a client's ftruncate
 * fails with EPERM, so no page the daemon maps can vanish under it (a
 * load or store there would be SIGBUS).
 */
#ifndef ROCEMU_EMULATOR_SHM_H
#define ROCEMU_EMULATOR_SHM_H

#include <stddef.h>
#include <stdint.h>

struct rocemu_shm {
	void *addr;
	size_t size;
};

/* Round len up to a multiple of the page size. */
size_t rocemu_page_align(size_t len);

/* Create a zeroed region of size bytes (page aligned). Returns the memfd or -errno. */
int rocemu_shm_create(const char *name, size_t size, struct rocemu_shm *shm);
void rocemu_shm_destroy(struct rocemu_shm *shm);

#endif /* ROCEMU_EMULATOR_SHM_H */
