/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/mem/ufile.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "emulator/mem/dm.h"
#include "emulator/mem/pd_mr.h"
#include "rocemu/log.h"

/* Users before what they use, as uverbs release does. */
static const struct rocemu_obj_kind *const ufile_kinds[] = {
	&rocemu_mr_kind, &rocemu_dm_kind, &rocemu_pd_kind,
};

static void ufile_free(struct rocemu_ufile *f)
{
	struct rocemu_emu *emu = f->emu;

	rocemu_objs_release(emu, f, ufile_kinds, sizeof(ufile_kinds) / sizeof(ufile_kinds[0]));
	if (f->sock >= 0) {
		rocemu_loop_unwatch_fd(emu->loop, f->sock);
		close(f->sock);
	}
	rocemu_list_del(&f->node);
	rocemu_uncharge(&f->charge);
	free(f);
}

static void ufile_release_if_unused(struct rocemu_ufile *f)
{
	if (!f->contexts && f->sock < 0)
		ufile_free(f);
}

/*
 * After a read of 0 bytes: the end of file (every holder closed it, or
 * shut it down), not an empty message, which reads as 0 bytes as well.
 */
static bool ufile_sock_ended(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLRDHUP };
	int ready = poll(&p, 1, 0);

	return ready < 0 || (ready == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)));
}

/* Readable: data a holder wrote (dropped) or the hang-up of the last holder. */
static void ufile_sock_event(void *arg, int fd, uint32_t revents)
{
	struct rocemu_ufile *f = arg;
	char junk[64];
	ssize_t n;

	n = recv(fd, junk, sizeof(junk), MSG_DONTWAIT);
	if (n > 0 || (n == 0 && !ufile_sock_ended(fd)) ||
	    (n < 0 && (errno == EAGAIN || errno == EINTR)))
		return;
	rocemu_log(ROCEMU_LOG_DEBUG, "%s cmd_fd closed by every holder", f->dev->name);
	rocemu_loop_unwatch_fd(f->emu->loop, f->sock);
	close(f->sock);
	f->sock = -1;
	ufile_release_if_unused(f);
}

int rocemu_ufile_create(struct rocemu_device *dev, struct rocemu_account *acct,
			struct rocemu_ufile **out, int *cmd_fd)
{
	struct rocemu_cmd_file_hdr hdr = { .magic = ROCEMU_CMD_FILE_MAGIC, .dev_index = dev->index };
	struct rocemu_ufile *f;
	int sv[2], err;

	if (getrandom(hdr.token, sizeof(hdr.token), 0) != (ssize_t)sizeof(hdr.token))
		return -EIO;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	/* It holds its end of the cmd_fd's socket pair. */
	err = rocemu_charge_account(acct, dev, &f->charge, ROCEMU_RES_CTX,
				    (struct rocemu_amount){ .fds = 1 });
	if (err) {
		free(f);
		return err;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		err = -errno;
		rocemu_uncharge(&f->charge);
		free(f);
		return err;
	}
	/* The header waits in the cmd_fd's receive queue for importers to peek at. */
	if (send(sv[0], &hdr, sizeof(hdr), MSG_NOSIGNAL) != (ssize_t)sizeof(hdr)) {
		err = -EIO;
		goto fail;
	}
	err = rocemu_loop_watch_fd(dev->emu->loop, sv[0], ufile_sock_event, f);
	if (err)
		goto fail;
	f->emu = dev->emu;
	f->dev = dev;
	f->sock = sv[0];
	memcpy(f->token, hdr.token, sizeof(f->token));
	rocemu_list_init(&f->pds);
	rocemu_list_init(&f->mrs);
	rocemu_list_init(&f->dms);
	rocemu_list_add_tail(&dev->emu->ufiles, &f->node);
	*out = f;
	*cmd_fd = sv[1];
	return 0;

fail:
	close(sv[0]);
	close(sv[1]);
	rocemu_uncharge(&f->charge);
	free(f);
	return err;
}

struct rocemu_ufile *rocemu_ufile_find(struct rocemu_emu *emu, const uint8_t *token)
{
	struct rocemu_ufile *f;

	rocemu_list_for_each(f, &emu->ufiles, struct rocemu_ufile, node)
		if (!memcmp(f->token, token, sizeof(f->token)))
			return f;
	return NULL;
}

void rocemu_ufile_put(struct rocemu_ufile *f)
{
	f->contexts--;
	ufile_release_if_unused(f);
}

void rocemu_ufile_free_all(struct rocemu_emu *emu)
{
	struct rocemu_ufile *f, *tmp;

	rocemu_list_for_each_safe(f, tmp, &emu->ufiles, struct rocemu_ufile, node)
		ufile_free(f);
}
