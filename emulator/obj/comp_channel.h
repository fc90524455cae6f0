/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Completion channels: a pipe whose read end the client polls; the daemon
 * writes the 8-byte user_cq of a CQ per completion event, as uverbs does.
 */
#ifndef ROCEMU_EMULATOR_COMP_CHANNEL_H
#define ROCEMU_EMULATOR_COMP_CHANNEL_H

#include <stdint.h>

#include "emulator/core/client.h"
#include "emulator/core/object.h"

/* Each holds a pipe, so the fd limit comes first; this only bounds the table. */
#define ROCEMU_MAX_CHANNELS (1u << 20)

struct rocemu_channel {
	struct rocemu_client *owner;
	struct rocemu_list node;	/* in owner->channels */
	uint32_t handle;
	struct rocemu_charge charge;	/* limits.h: its pipe's write end */
	int event_fd;			/* write end, O_NONBLOCK */
	uint32_t users;			/* CQs reporting to it */
};

/* Returns 0 with the read end in *read_fd (to be sent and closed), or -errno. */
int rocemu_channel_create(struct rocemu_client *c, uint32_t *handle, int *read_fd);
/* -EINVAL for a handle c does not own, -EBUSY while CQs use it. */
int rocemu_channel_destroy(struct rocemu_client *c, uint32_t handle);
struct rocemu_channel *rocemu_channel_lookup(struct rocemu_client *c, uint32_t handle);
/* Channels as objects of their context (object.h), freed when it closes. */
extern const struct rocemu_obj_kind rocemu_channel_kind;

#endif /* ROCEMU_EMULATOR_COMP_CHANNEL_H */
