/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* What the daemon does for each control request: a table from op to handler. */
#ifndef ROCEMU_EMULATOR_CTRL_OPS_H
#define ROCEMU_EMULATOR_CTRL_OPS_H

#include <stdint.h>

#include "emulator/core/client.h"

struct rocemu_ctrl_reply {
	void *body;			/* ROCEMU_CTRL_MSG_MAX bytes */
	uint32_t len;			/* preset to the op's fixed response size */
	int fds[ROCEMU_CTRL_MAX_FDS];	/* sent with the response, then closed */
	int nfds;
};

/*
 * Run the request hdr/body (already checked by rocemu_msg_check) for c.
 * Returns 0 with reply filled, or -errno (no body, no fds). Object ops
 * before OPEN_DEVICE are -EINVAL.
 */
int rocemu_ctrl_dispatch(struct rocemu_client *c, const struct rocemu_msg_hdr *hdr,
			 const void *body, struct rocemu_ctrl_reply *reply);

#endif /* ROCEMU_EMULATOR_CTRL_OPS_H */
