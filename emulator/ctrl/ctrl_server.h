/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The control socket <runtime_dir>/ctrl.sock (SOCK_SEQPACKET): accepts
 * connections of the daemon's own user (or root), answers each request
 * with one response of the same op and seq, and arms the idle-exit timer
 * whenever no connection is left.
 */
#ifndef ROCEMU_EMULATOR_CTRL_SERVER_H
#define ROCEMU_EMULATOR_CTRL_SERVER_H

#include <stddef.h>

#include "emulator/core/emu.h"

/*
 * Bind and listen on the socket (a stale file must be gone already) and
 * watch it in emu->loop. idle_exit_s > 0: stop the loop after that many
 * seconds without any connection. Returns 0 or -errno with a reason in err.
 */
int rocemu_ctrl_server_start(struct rocemu_emu *emu, unsigned int idle_exit_s,
			     char *err, size_t errlen);
/* Stop listening and remove the socket file (clients stay for rocemu_emu_fini). */
void rocemu_ctrl_server_stop(struct rocemu_emu *emu);

#endif /* ROCEMU_EMULATOR_CTRL_SERVER_H */
