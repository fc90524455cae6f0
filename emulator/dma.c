/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/dma.h"

#include <errno.h>
#include <limits.h>

#include "emulator/mw.h"
#include "emulator/pd_mr.h"
#include "emulator/qp.h"

/* Keys are (MR handle << 8) | variant: the handle finds the MR, the whole key must match. */
static struct rocemu_mr *mr_by_key(const struct rocemu_emu *emu, uint32_t key)
{
	struct rocemu_mr *mr = rocemu_idtable_get(&emu->mrs, key >> 8);

	return mr && mr->lkey == key && !mr->invalid ? mr : NULL;
}

/* PD, rights, then bounds; the address in the owner's memory on success. */
static int mr_check(const struct rocemu_mr *mr, const struct rocemu_pd *pd, uint64_t va,
		    uint64_t len, unsigned int access, uint64_t *addr)
{
	if (mr->pd != pd)
		return -EPERM;
	if ((mr->access & access) != access)
		return -EACCES;
	if (va < mr->iova || len > mr->length || va - mr->iova > mr->length - len)
		return -ERANGE;
	*addr = mr->addr + (va - mr->iova);
	return 0;
}

int rocemu_dma_rkey(const struct rocemu_qp *qp, uint32_t rkey, uint64_t va, uint64_t len,
		    unsigned int access, uint64_t *addr)
{
	const struct rocemu_mr *mr;

	if (rocemu_mw_is_key(rkey))
		return rocemu_mw_rkey(qp, rkey, va, len, access, addr);
	mr = mr_by_key(qp->owner->emu, rkey);
	if (!mr)
		return -ENOKEY;
	return mr_check(mr, qp->pd, va, len, access, addr);
}

int rocemu_dma_sgl(const struct rocemu_qp *qp, const struct rocemu_sge *sge, unsigned int nsge,
		   uint64_t offset, uint64_t len, unsigned int access, struct iovec *remote,
		   unsigned int max, unsigned int *n)
{
	const struct rocemu_mr *mr;
	uint64_t take, addr;
	unsigned int i;
	int err;

	*n = 0;
	for (i = 0; i < nsge && len; i++) {
		if (offset >= sge[i].length) {
			offset -= sge[i].length;
			continue;
		}
		take = sge[i].length - offset;
		if (take > len)
			take = len;
		mr = mr_by_key(qp->owner->emu, sge[i].key);
		if (!mr || mr->owner != qp->owner)
			return -ENOKEY;
		err = mr_check(mr, qp->pd, sge[i].addr + offset, take, access, &addr);
		if (err)
			return err;
		if (*n == max)
			return -EMSGSIZE;
		remote[*n].iov_base = (void *)(uintptr_t)addr;
		remote[*n].iov_len = take;
		(*n)++;
		len -= take;
		offset = 0;
	}
	return len ? -EMSGSIZE : 0;
}

/* Cursor over an iovec list: whole iovecs from idx, the first shortened by off. */
struct iov_cursor {
	const struct iovec *iov;
	unsigned int cnt, idx;
	size_t off;
};

/* Up to IOV_MAX iovecs of at most limit bytes from c into out; returns their bytes. */
static size_t cursor_take(const struct iov_cursor *c, size_t limit, struct iovec *out,
			  unsigned int *nout)
{
	size_t total = 0, off = c->off, len;
	unsigned int i;

	*nout = 0;
	for (i = c->idx; i < c->cnt && *nout < IOV_MAX && total < limit; i++, off = 0) {
		len = c->iov[i].iov_len - off;
		if (len > limit - total)
			len = limit - total;
		out[*nout].iov_base = (char *)c->iov[i].iov_base + off;
		out[*nout].iov_len = len;
		(*nout)++;
		total += len;
	}
	return total;
}

static void cursor_advance(struct iov_cursor *c, size_t bytes)
{
	while (bytes && c->idx < c->cnt) {
		size_t left = c->iov[c->idx].iov_len - c->off;

		if (bytes < left) {
			c->off += bytes;
			return;
		}
		bytes -= left;
		c->idx++;
		c->off = 0;
	}
}

int rocemu_dma_copy(pid_t pid, const struct iovec *local, unsigned int nlocal,
		    const struct iovec *remote, unsigned int nremote, bool to_remote)
{
	struct iov_cursor lc = { local, nlocal, 0, 0 }, rc = { remote, nremote, 0, 0 };
	static struct iovec lbuf[IOV_MAX], rbuf[IOV_MAX];
	unsigned int nl, nr;
	size_t bytes;
	ssize_t done;

	for (;;) {
		/* Remote batch first, then as many local bytes as fit; trim remote to match. */
		bytes = cursor_take(&rc, SIZE_MAX, rbuf, &nr);
		if (!bytes)
			return 0;
		bytes = cursor_take(&lc, bytes, lbuf, &nl);
		if (!bytes)
			return -EFAULT;
		cursor_take(&rc, bytes, rbuf, &nr);
		done = to_remote ? process_vm_writev(pid, lbuf, nl, rbuf, nr, 0)
				 : process_vm_readv(pid, lbuf, nl, rbuf, nr, 0);
		if (done != (ssize_t)bytes)
			return -EFAULT;
		cursor_advance(&lc, bytes);
		cursor_advance(&rc, bytes);
	}
}
