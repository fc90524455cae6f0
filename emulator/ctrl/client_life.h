/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * A client's life (client.h): made when the control socket accepts its
 * connection, bound to a device by OPEN_DEVICE or IMPORT_DEVICE, freed
 * with every object it owns when the connection closes.
 */
#ifndef ROCEMU_EMULATOR_CLIENT_LIFE_H
#define ROCEMU_EMULATOR_CLIENT_LIFE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "emulator/core/client.h"
#include "rocemu/ctrl.h"

/*
 * A client for accepted socket sock of process pid, charged to its account.
 * NULL with errno set: ENOMEM, or the process's limits (limits.h).
 */
struct rocemu_client *rocemu_client_new(struct rocemu_emu *emu, int sock, pid_t pid, uid_t uid);

/*
 * Bind c to device dev_index: attach its address space (req, the request
 * of len bytes holding proof: mm.h), make its async pipe, kick eventfd,
 * context page and ufile, and return the client's ends in fds[0..3] (to
 * be sent and closed; fds[3] is the cmd_fd). Returns 0, -ENODEV for no
 * such device, -EBUSY when already bound, or -errno.
 */
int rocemu_client_open_device(struct rocemu_client *c, uint32_t dev_index, const void *req,
			      size_t len, const struct rocemu_mem_proof *proof,
			      struct rocemu_open_device_resp *resp, int *fds, int *nfds);

/*
 * As rocemu_client_open_device, for the device and ufile of the cmd_fd
 * holding token (fds[3] is then not set: the importer has the cmd_fd).
 * -EINVAL when no ufile has that token.
 */
int rocemu_client_import_device(struct rocemu_client *c, const uint8_t *token, const void *req,
				size_t len, const struct rocemu_mem_proof *proof,
				struct rocemu_open_device_resp *resp, int *fds, int *nfds);

/* Destroy every object of c, close its descriptors and free it. */
void rocemu_client_free(struct rocemu_client *c);

#endif /* ROCEMU_EMULATOR_CLIENT_LIFE_H */
