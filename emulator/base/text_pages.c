/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/base/text_pages.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* First buffer tried; doubled until the report fits. */
#define RENDER_START_SIZE (64 * 1024)

void rocemu_text_pages_free(struct rocemu_text_pages *pages)
{
	free(pages->text);
	memset(pages, 0, sizeof(*pages));
}

static int snapshot_take(struct rocemu_text_pages *pages, struct rocemu_emu *emu, uint16_t op,
			 rocemu_text_render render)
{
	size_t size = RENDER_START_SIZE;
	char *buf;
	int n;

	rocemu_text_pages_free(pages);
	for (;;) {
		buf = malloc(size);
		if (!buf)
			return -ENOMEM;
		n = render(emu, buf, size);
		if (n > 0)
			break;
		free(buf);
		if (n != -ENOSPC)
			return n < 0 ? n : -EPROTO;
		size *= 2;	/* malloc fails long before this wraps */
	}
	pages->op = op;
	pages->text = buf;
	pages->len = (size_t)n - 1;
	return 0;
}

int rocemu_text_pages_serve(struct rocemu_text_pages *pages, struct rocemu_emu *emu,
			    uint16_t op, rocemu_text_render render,
			    const struct rocemu_text_req *req, struct rocemu_text_resp *resp,
			    uint32_t *len)
{
	size_t page;
	int err;

	if (req->offset == 0) {
		err = snapshot_take(pages, emu, op, render);
		if (err)
			return err;
	} else if (!pages->text || pages->op != op || req->offset > pages->len) {
		return -EINVAL;
	}
	page = pages->len - req->offset;
	if (page > ROCEMU_TEXT_PAGE_MAX)
		page = ROCEMU_TEXT_PAGE_MAX;
	resp->total = pages->len;
	memcpy(resp->text, pages->text + req->offset, page);
	*len = (uint32_t)(sizeof(*resp) + page);
	if (req->offset + page == pages->len)
		rocemu_text_pages_free(pages);
	return 0;
}
