/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Text reports (STATUS, STATS) of any size, served in pages: the request at
 * offset 0 renders a snapshot that later pages of the same connection read,
 * so a report is consistent however long, and no message exceeds
 * ROCEMU_CTRL_MSG_MAX.
 */
#ifndef ROCEMU_EMULATOR_TEXT_PAGES_H
#define ROCEMU_EMULATOR_TEXT_PAGES_H

#include <stddef.h>
#include <stdint.h>

#include "rocemu/ctrl.h"

struct rocemu_emu;

/* A renderer: writes the NUL-terminated report; its length with the NUL, or -ENOSPC. */
typedef int (*rocemu_text_render)(struct rocemu_emu *emu, char *buf, size_t size);

/* One connection's snapshot, zeroed when none. */
struct rocemu_text_pages {
	uint16_t op;		/* the op whose report text holds */
	char *text;
	size_t len;		/* without the NUL */
};

/*
 * Answer req for op into resp (ROCEMU_CTRL_MSG_MAX bytes): at offset 0 a
 * new snapshot from render, later the page of the snapshot at req->offset.
 * *len gets the response body size. Returns 0, -EINVAL for an offset with
 * no snapshot of op to read, or -ENOMEM.
 */
int rocemu_text_pages_serve(struct rocemu_text_pages *pages, struct rocemu_emu *emu,
			    uint16_t op, rocemu_text_render render,
			    const struct rocemu_text_req *req, struct rocemu_text_resp *resp,
			    uint32_t *len);

/* Drop the snapshot (the last page was read, or the connection closes). */
void rocemu_text_pages_free(struct rocemu_text_pages *pages);

#endif /* ROCEMU_EMULATOR_TEXT_PAGES_H */
