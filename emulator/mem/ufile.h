/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The object space contexts share, as the kernel's uverbs file: a context
 * opened with OPEN_DEVICE makes one, and IMPORT_DEVICE with its cmd_fd
 * joins it. PDs, MRs and device memory belong to it, so any of its
 * contexts can import, use and destroy them; they go with the ufile, once
 * no context is bound to it and no process holds its cmd_fd. QPs, CQs and
 * the rest stay the objects of the one connection that made them.
 *
 * The cmd_fd is one end of a socketpair holding one message, the
 * rocemu_cmd_file_hdr with a random token an importer reads (MSG_PEEK);
 * the daemon keeps the other end and sees a hang-up when the last process
 * holding the cmd_fd closed it or died.
 */
#ifndef ROCEMU_EMULATOR_UFILE_H
#define ROCEMU_EMULATOR_UFILE_H

#include <stdint.h>

#include "emulator/core/emu.h"
#include "rocemu/ctrl.h"

struct rocemu_ufile {
	struct rocemu_emu *emu;
	struct rocemu_device *dev;
	struct rocemu_list node;	/* in emu->ufiles */
	uint8_t token[ROCEMU_CMD_TOKEN_LEN];
	int sock;			/* the daemon's end; -1 once the cmd_fd is closed everywhere */
	uint32_t contexts;		/* clients bound to it */
	struct rocemu_charge charge;	/* limits.h: to the process that opened the device */
	struct rocemu_list pds, mrs, dms;
};

/*
 * A new ufile of dev, charged to acct, and the cmd_fd naming it (*cmd_fd,
 * to send and close). 0 or -errno.
 */
int rocemu_ufile_create(struct rocemu_device *dev, struct rocemu_account *acct,
			struct rocemu_ufile **out, int *cmd_fd);
/* The ufile whose cmd_fd holds token, or NULL. */
struct rocemu_ufile *rocemu_ufile_find(struct rocemu_emu *emu, const uint8_t *token);
/* A context leaves f (it closed): f goes with its objects when nothing holds it. */
void rocemu_ufile_put(struct rocemu_ufile *f);
/* At daemon exit: every ufile no client holds. */
void rocemu_ufile_free_all(struct rocemu_emu *emu);

#endif /* ROCEMU_EMULATOR_UFILE_H */
