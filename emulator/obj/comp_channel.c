/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/obj/comp_channel.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "rocemu/log.h"

int rocemu_channel_create(struct rocemu_client *c, uint32_t *handle, int *read_fd)
{
	struct rocemu_channel *ch;
	int pipefd[2], err;

	ch = calloc(1, sizeof(*ch));
	if (!ch)
		return -ENOMEM;
	err = rocemu_charge(c, &ch->charge, ROCEMU_RES_CHANNEL, (struct rocemu_amount){ .fds = 1 });
	if (err)
		goto fail;
	if (pipe2(pipefd, O_CLOEXEC)) {
		err = -errno;
		goto fail_charge;
	}
	/* Only the daemon's end is non-blocking: a full pipe must not stall it. */
	if (fcntl(pipefd[1], F_SETFL, O_NONBLOCK)) {
		err = -errno;
		goto fail_pipe;
	}
	err = rocemu_obj_add(c->emu, &rocemu_channel_kind, c, ch);
	if (err)
		goto fail_pipe;
	ch->event_fd = pipefd[1];
	*handle = ch->handle;
	*read_fd = pipefd[0];
	rocemu_log(ROCEMU_LOG_DEBUG, "%s channel %u create", c->dev->name, ch->handle);
	return 0;

fail_pipe:
	close(pipefd[0]);
	close(pipefd[1]);
fail_charge:
	rocemu_uncharge(&ch->charge);
fail:
	free(ch);
	return err;
}

struct rocemu_channel *rocemu_channel_lookup(struct rocemu_client *c, uint32_t handle)
{
	return rocemu_obj_lookup(c->emu, &rocemu_channel_kind, c, handle);
}

static void channel_free(struct rocemu_emu *emu, struct rocemu_channel *ch)
{
	rocemu_log(ROCEMU_LOG_DEBUG, "%s channel %u destroy", ch->owner->dev->name, ch->handle);
	rocemu_obj_remove(emu, &rocemu_channel_kind, ch);
	close(ch->event_fd);
	rocemu_uncharge(&ch->charge);
	free(ch);
}

int rocemu_channel_destroy(struct rocemu_client *c, uint32_t handle)
{
	struct rocemu_channel *ch = rocemu_channel_lookup(c, handle);

	if (!ch)
		return -EINVAL;
	if (ch->users)
		return -EBUSY;
	channel_free(c->emu, ch);
	return 0;
}

ROCEMU_OBJ_KIND(rocemu_channel_kind, struct rocemu_channel, struct rocemu_client, channels,
		channels, owner, handle, node, channel_free, .first = 1, .max = ROCEMU_MAX_CHANNELS);
