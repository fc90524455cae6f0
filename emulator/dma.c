/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/dma.h"

#include <errno.h>
#include <limits.h>

#include "emulator/mkey.h"
#include "emulator/mkey_indirect.h"
#include "emulator/pd_mr.h"

int rocemu_dma_seg_add(struct rocemu_dma_seg *remote, unsigned int max, unsigned int *n,
		       uint64_t addr, uint64_t len, pid_t pid)
{
	if (!remote)
		return 0;
	if (*n == max)
		return -EMSGSIZE;
	remote[*n].iov.iov_base = (void *)(uintptr_t)addr;
	remote[*n].iov.iov_len = (size_t)len;
	remote[*n].pid = pid;
	(*n)++;
	return 0;
}

/* [va, va + len) through key as segments appended to remote: one, or an indirect key's pieces. */
static int key_segs(const struct rocemu_qp *qp, uint32_t key, enum rocemu_mkey_use use, uint64_t va,
		    uint64_t len, unsigned int access, struct rocemu_dma_seg *remote,
		    unsigned int max, unsigned int *n)
{
	struct rocemu_mkey_ref ref;
	int err = rocemu_mkey_resolve(qp, key, use, va, len, access, &ref);

	if (err)
		return err;
	if (ref.mr->indirect)
		return rocemu_mkey_indirect_segs(qp, ref.mr->indirect, ref.addr, len, access, remote,
						 max, n);
	return rocemu_dma_seg_add(remote, max, n, ref.addr, len, ref.pid);
}

int rocemu_dma_rkey(const struct rocemu_qp *qp, uint32_t rkey, uint64_t va, uint64_t len,
		    unsigned int access, struct rocemu_dma_seg *remote, unsigned int max,
		    unsigned int *n)
{
	*n = 0;
	return key_segs(qp, rkey, ROCEMU_MKEY_REMOTE, va, len, access, remote, max, n);
}

int rocemu_dma_sgl(const struct rocemu_qp *qp, const struct rocemu_sge *sge, unsigned int nsge,
		   uint64_t offset, uint64_t len, unsigned int access, struct rocemu_dma_seg *remote,
		   unsigned int max, unsigned int *n)
{
	uint64_t take;
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
		err = key_segs(qp, sge[i].key, ROCEMU_MKEY_LOCAL, sge[i].addr + offset, take, access,
			       remote, max, n);
		if (err)
			return err;
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

/* Copy between the local cursor and remote iovecs all in process pid; 0 or -errno. */
static int copy_run(pid_t pid, struct iov_cursor *lc, const struct iovec *remote,
		    unsigned int nremote, bool to_remote)
{
	struct iov_cursor rc = { remote, nremote, 0, 0 };
	static struct iovec lbuf[IOV_MAX], rbuf[IOV_MAX];
	unsigned int nl, nr;
	size_t bytes;
	ssize_t done;

	for (;;) {
		/* Remote batch first, then as many local bytes as fit; trim remote to match. */
		bytes = cursor_take(&rc, SIZE_MAX, rbuf, &nr);
		if (!bytes)
			return 0;
		bytes = cursor_take(lc, bytes, lbuf, &nl);
		if (!bytes)
			return -EFAULT;
		cursor_take(&rc, bytes, rbuf, &nr);
		done = to_remote ? process_vm_writev(pid, lbuf, nl, rbuf, nr, 0)
				 : process_vm_readv(pid, lbuf, nl, rbuf, nr, 0);
		/* ESRCH: no such process, or one that exited and has no memory left (a zombie). */
		if (done < 0 && errno == ESRCH)
			return -ESRCH;
		if (done != (ssize_t)bytes)
			return -EFAULT;
		cursor_advance(lc, bytes);
		cursor_advance(&rc, bytes);
	}
}

int rocemu_dma_copy(pid_t owner, const struct iovec *local, unsigned int nlocal,
		    const struct rocemu_dma_seg *remote, unsigned int nremote, bool to_remote)
{
	struct iov_cursor lc = { local, nlocal, 0, 0 };
	static struct iovec run[IOV_MAX];	/* the daemon is single-threaded */
	unsigned int i = 0, n;
	pid_t pid;
	int err;

	/*
	 * One process_vm_* call per run of segments in one process, adjacent
	 * ones joined: the kernel pins pages once per remote iovec, taking the
	 * target's mmap lock and finding its VMA each time.
	 */
	while (i < nremote) {
		pid = remote[i].pid;
		for (n = 0; i < nremote && remote[i].pid == pid; i++) {
			if (n && (char *)run[n - 1].iov_base + run[n - 1].iov_len ==
					 (char *)remote[i].iov.iov_base) {
				run[n - 1].iov_len += remote[i].iov.iov_len;
				continue;
			}
			if (n == IOV_MAX)
				break;
			run[n++] = remote[i].iov;
		}
		err = copy_run(pid, &lc, run, n, to_remote);
		/* Another process's memory gone is memory gone, not the QP's process. */
		if (err == -ESRCH && pid != owner)
			err = -EFAULT;
		if (err)
			return err;
	}
	return 0;
}
