/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The RDMA CM file, /dev/infiniband/rdma_cm (ucma.c): what the libc
 * overrides ask of it, and its record of each file's ids (ucma_ids.c).
 */
#ifndef ROCEMU_UCMA_H
#define ROCEMU_UCMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#pragma GCC visibility push(hidden)

/* Open the RDMA CM file with open(2)'s flags: its descriptor or -errno. */
int rocemu_ucma_open(int flags);
/* write(2) to fd when it is an RDMA CM file: true, and *ret as write returns (errno set). */
bool rocemu_ucma_write(int fd, const void *buf, size_t n, ssize_t *ret);
/* close(2) of fd: an RDMA CM file's descriptor lets go of the file. */
void rocemu_ucma_close(int fd);
/* fstat(2) of fd when it is an RDMA CM file (a character device): true. */
bool rocemu_ucma_fstat(int fd, struct stat64 *st);

/* ---- an RDMA CM file's ids, for when rocemud is gone (ucma_ids.c); caller serializes ---- */

struct rocemu_ucma_id {
	uint32_t handle;
	uint64_t uid;
	uint32_t events_reported;	/* events GET_EVENT gave with this id's uid */
	bool removal_reported;		/* DEVICE_REMOVAL given */
	/* A connection request's id has its listener's uid until an ACCEPT gives it its own. */
	bool uid_own;
};

struct rocemu_ucma_ids {
	struct rocemu_ucma_id *v;
	size_t n, cap;
};

/* Record what a command (ABI bytes cmd) that succeeded with response bytes resp did to the ids. */
void rocemu_ucma_ids_note(struct rocemu_ucma_ids *ids, const void *cmd, const void *resp);
/* MIGRATE_ID moved handle from one file to another. */
void rocemu_ucma_ids_move(struct rocemu_ucma_ids *from, struct rocemu_ucma_ids *to,
			  uint32_t handle);
/*
 * Answer cmd with the daemon gone, writing to its response address:
 * GET_EVENT gives each id's DEVICE_REMOVAL once, then -ENODEV; DESTROY_ID
 * gives the id's events reported; any other command is -ENODEV.
 */
int rocemu_ucma_ids_lost(struct rocemu_ucma_ids *ids, const void *cmd);

#pragma GCC visibility pop

#endif /* ROCEMU_UCMA_H */
