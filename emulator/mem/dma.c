/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/mem/dma.h"

#include <errno.h>
#include <limits.h>

#include "emulator/base/proc_maps.h"
#include "emulator/mem/mkey.h"
#include "emulator/mem/mkey_indirect.h"
#include "emulator/mem/mm.h"
#include "emulator/mem/mm_guard.h"
#include "emulator/mem/mm_watch.h"
#include "emulator/mem/pd_mr.h"

/* Append [addr, addr + len) of mm, generation gen, to remote[*n] (NULL: nothing); -EMSGSIZE past max. */
static int seg_add(struct rocemu_dma_seg *remote, unsigned int max, unsigned int *n, uint64_t addr,
		   uint64_t len, struct rocemu_mm *mm, uint64_t gen)
{
	if (!remote)
		return 0;
	if (*n == max)
		return -EMSGSIZE;
	remote[*n].iov.iov_base = (void *)(uintptr_t)addr;
	remote[*n].iov.iov_len = (size_t)len;
	remote[*n].mm = mm;
	remote[*n].gen = gen;
	(*n)++;
	return 0;
}

/*
 * Bytes [off, off + len) of indirect key layout l (already checked against
 * its length) as segments appended to remote, each piece resolved through
 * its entry's lkey again, writes asking local write of the MR under it.
 */
static int indirect_segs(struct rocemu_mem_owner owner, const struct rocemu_mkey_layout *l,
			 uint64_t off, uint64_t len, unsigned int access,
			 struct rocemu_dma_seg *remote, unsigned int max, unsigned int *n)
{
	unsigned int entry_access = access & (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
					      IBV_ACCESS_REMOTE_ATOMIC) ? IBV_ACCESS_LOCAL_WRITE : 0;
	const struct rocemu_mkey_entry *e;
	struct rocemu_mkey_ref ref;
	uint64_t rep, take;
	uint32_t i = 0;
	int err;

	if (!len)
		return 0;
	/* In range, so the layout has bytes: block is not 0. */
	rep = off / l->block;
	off -= rep * l->block;
	while (off >= l->entry[i].bytes)
		off -= l->entry[i++].bytes;
	while (len) {
		e = &l->entry[i];
		take = e->bytes - off < len ? e->bytes - off : len;
		if (take) {
			err = rocemu_mkey_resolve(owner, e->key, ROCEMU_MKEY_LOCAL,
						  e->addr + rep * e->stride + off, take, entry_access, &ref);
			if (!err && ref.mr->indirect)
				err = -ENOKEY;
			if (!err)
				err = seg_add(remote, max, n, ref.addr, take, ref.mm, ref.gen);
			if (err)
				return err;
		}
		len -= take;
		off = 0;
		if (++i == l->num) {
			i = 0;
			rep++;
		}
	}
	return 0;
}

/* [va, va + len) through key as segments appended to remote: one, or an indirect key's pieces. */
static int key_segs(struct rocemu_mem_owner owner, uint32_t key, enum rocemu_mkey_use use,
		    uint64_t va, uint64_t len, unsigned int access, struct rocemu_dma_seg *remote,
		    unsigned int max, unsigned int *n)
{
	struct rocemu_mkey_ref ref;
	int err = rocemu_mkey_resolve(owner, key, use, va, len, access, &ref);

	if (err)
		return err;
	if (ref.mr->indirect)
		return indirect_segs(owner, ref.mr->indirect, ref.addr, len, access, remote, max, n);
	return seg_add(remote, max, n, ref.addr, len, ref.mm, ref.gen);
}

int rocemu_dma_rkey(struct rocemu_mem_owner owner, uint32_t rkey, uint64_t va, uint64_t len,
		    unsigned int access, struct rocemu_dma_seg *remote, unsigned int max,
		    unsigned int *n)
{
	*n = 0;
	return key_segs(owner, rkey, ROCEMU_MKEY_REMOTE, va, len, access, remote, max, n);
}

int rocemu_dma_sgl(struct rocemu_mem_owner owner, const struct rocemu_sge *sge, unsigned int nsge,
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
		err = key_segs(owner, sge[i].key, ROCEMU_MKEY_LOCAL, sge[i].addr + offset, take,
			       access, remote, max, n);
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

/* Up to max iovecs of at most limit bytes from c into out; returns their bytes. */
static size_t cursor_take(const struct iov_cursor *c, size_t limit, struct iovec *out,
			  unsigned int max, unsigned int *nout)
{
	size_t total = 0, off = c->off, len;
	unsigned int i;

	*nout = 0;
	for (i = c->idx; i < c->cnt && *nout < max && total < limit; i++, off = 0) {
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

/* Copy between the local cursor and each range of remote, in mm, through /proc/PID/mem; 0 or -errno. */
static int copy_by_mem(const struct rocemu_mm *mm, struct iov_cursor *lc,
		       const struct iovec *remote, unsigned int nremote, bool to_remote)
{
	static struct iovec lbuf[IOV_MAX];	/* the daemon is single-threaded */
	unsigned int i, nl;
	uint64_t addr;
	size_t len, bytes;
	int err;

	for (i = 0; i < nremote; i++) {
		addr = (uintptr_t)remote[i].iov_base;
		for (len = remote[i].iov_len; len; len -= bytes, addr += bytes) {
			bytes = cursor_take(lc, len, lbuf, IOV_MAX, &nl);
			if (!bytes)
				return -EFAULT;
			err = rocemu_mm_copy(mm, lbuf, nl, addr, bytes, to_remote);
			if (err)
				return err;
			cursor_advance(lc, bytes);
		}
	}
	return 0;
}

/*
 * /proc/PID/mem forces its way (FOLL_FORCE) into what the process maps
 * read-only or not at all: before a copy of memory that follows the
 * mapping (ODP, unwatched) goes that way, each range is checked as a page
 * fault would be. process_vm_readv and process_vm_writev fault as the
 * process would, so a copy through the guard needs no such look.
 */
static bool runs_faultable(const struct rocemu_mm *mm, const struct iovec *remote,
			   unsigned int nremote, bool to_remote)
{
	for (unsigned int i = 0; i < nremote; i++)
		if (remote[i].iov_len &&
		    rocemu_proc_range_check(mm->pid, (uintptr_t)remote[i].iov_base,
					    remote[i].iov_len, to_remote))
			return false;
	return true;
}

/*
 * Copy between the local cursor and the ranges of remote, all in mm; 0 or
 * -errno. By pid through mm's guard where it has one, one call for as many
 * ranges as it takes (the kernel takes the target's mmap lock and pins its
 * pages per range); what that does not move goes through /proc/PID/mem,
 * after runs_faultable when some range follows the mapping (follows).
 */
static int copy_run(struct rocemu_mm *mm, struct iov_cursor *lc, const struct iovec *remote,
		    unsigned int nremote, bool to_remote, bool follows)
{
	static struct iovec lbuf[IOV_MAX], rbuf[IOV_MAX];	/* [0]: the guard's */
	struct iov_cursor rc = { remote, nremote, 0, 0 };
	unsigned int nl, nr;
	size_t bytes;
	int err;

	for (;;) {
		/* Remote batch first, then as many local bytes as fit; trim remote to match. */
		bytes = cursor_take(&rc, SIZE_MAX, rbuf + 1, IOV_MAX - 1, &nr);
		if (!bytes)
			return 0;
		bytes = cursor_take(lc, bytes, lbuf + 1, IOV_MAX - 1, &nl);
		if (!bytes)
			return -EFAULT;
		cursor_take(&rc, bytes, rbuf + 1, IOV_MAX - 1, &nr);
		if (rocemu_mm_guard_copy(mm, lbuf, nl + 1, rbuf, nr + 1, bytes, to_remote)) {
			cursor_advance(lc, bytes);
		} else {
			/* A pid that is not the address space's any more fails the check or the copy. */
			if (follows && !runs_faultable(mm, rbuf + 1, nr, to_remote))
				return -EFAULT;
			err = copy_by_mem(mm, lc, rbuf + 1, nr, to_remote);
			if (err)
				return err;
		}
		cursor_advance(&rc, bytes);
	}
}

bool rocemu_dma_segs_reachable(const struct rocemu_dma_seg *segs, unsigned int n)
{
	unsigned int i;

	/*
	 * The reports the loop has read are enough: a munmap returns only once
	 * the daemon has read its report, so nothing new is mapped at an
	 * address whose report is still unread, by the thread that unmapped.
	 */
	for (i = 0; i < n; i++) {
		if (!rocemu_mm_reachable(segs[i].mm, (uintptr_t)segs[i].iov.iov_base,
					 segs[i].iov.iov_len, segs[i].gen))
			return false;
	}
	return true;
}

int rocemu_dma_copy(const struct rocemu_mm *owner, const struct iovec *local, unsigned int nlocal,
		    const struct rocemu_dma_seg *remote, unsigned int nremote, bool to_remote)
{
	static struct iovec run[IOV_MAX - 1];	/* the daemon is single-threaded */
	struct iov_cursor lc = { local, nlocal, 0, 0 };
	struct rocemu_mm *mm;
	unsigned int i, n;
	bool follows;
	int err;

	if (!rocemu_dma_segs_reachable(remote, nremote))
		return -EFAULT;
	/* One run per stretch of segments in one address space, adjacent ones joined. */
	for (i = 0; i < nremote;) {
		mm = remote[i].mm;
		follows = false;
		for (n = 0; i < nremote && remote[i].mm == mm; i++) {
			follows |= remote[i].gen == ROCEMU_MM_FOLLOWS;
			if (n && (char *)run[n - 1].iov_base + run[n - 1].iov_len ==
					 (char *)remote[i].iov.iov_base) {
				run[n - 1].iov_len += remote[i].iov.iov_len;
				continue;
			}
			if (n == IOV_MAX - 1)
				break;
			run[n++] = remote[i].iov;
		}
		err = copy_run(mm, &lc, run, n, to_remote, follows);
		/* Another address space gone is memory gone, not the QP's process. */
		if (err == -ESRCH && mm != owner)
			err = -EFAULT;
		if (err)
			return err;
	}
	return 0;
}
