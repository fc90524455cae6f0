/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * /dev/infiniband/rdma_cm, the kernel's RDMA CM file, answered by rocemud
 * so that the unmodified librdmacm (and rsocket, librspreload, every
 * rdma_* call) runs on emulated devices. Opening it gives librdmacm the
 * read end of an event pipe (one byte per queued event, so poll, epoll and
 * O_NONBLOCK behave as on the kernel's file) and keeps, hidden, a control
 * connection that carries each write() of the ABI to the daemon; the
 * daemon's answer is copied to the command's response address, as the
 * kernel's copy_to_user does. fstat shows a character device, as librdmacm
 * checks. The libc overrides (lib/libc_overrides.c) bring open, write, close
 * and fstat here; every other descriptor costs them one atomic load.
 */
#include "lib/shim.h"
#include "lib/cm/ucma.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <rdma/rdma_cma_abi.h>

#include "rocemu/log.h"

#define UCMA_MAX_FILES 64
#define MISC_MAJOR 10		/* rdma_cm is a misc device */
#define UCMA_MINOR 58

struct ucma_file {
	int event_fd;		/* the descriptor librdmacm holds (its number, the app may close it) */
	int read_fd;		/* the shim's own descriptor of the event pipe */
	uint32_t file_id;	/* the daemon's name for it */
	struct rocemu_conn conn;
	/*
	 * Under files_lock: the application's descriptor, until close, and each
	 * write() in progress. As the kernel's file, it is released (its ids
	 * destroyed) when the last goes, so a close never pulls the pipe or the
	 * control connection from under a thread inside GET_EVENT.
	 */
	unsigned int refs;
	struct rocemu_ucma_ids ids;	/* under ids_lock */
};

static struct ucma_file *files[UCMA_MAX_FILES];
static unsigned int num_files;	/* read without the lock on every write and close */
static pthread_mutex_t files_lock = PTHREAD_MUTEX_INITIALIZER;
/* Every file's record of its ids (MIGRATE_ID moves one between two files). */
static pthread_mutex_t ids_lock = PTHREAD_MUTEX_INITIALIZER;

/* The file behind fd with a reference taken, or NULL; remove also takes it out of the table. */
static struct ucma_file *file_get(int fd, bool remove)
{
	struct ucma_file *f = NULL;
	unsigned int i;

	if (__builtin_expect(!__atomic_load_n(&num_files, __ATOMIC_RELAXED), 1))
		return NULL;
	pthread_mutex_lock(&files_lock);
	for (i = 0; i < UCMA_MAX_FILES && !f; i++) {
		if (files[i] && files[i]->event_fd == fd) {
			f = files[i];
			f->refs++;
			if (remove) {
				files[i] = NULL;
				__atomic_store_n(&num_files, num_files - 1, __ATOMIC_RELAXED);
			}
		}
	}
	pthread_mutex_unlock(&files_lock);
	return f;
}

/* Drop a reference; the last one releases the file, and the daemon destroys its ids. */
static void file_put(struct ucma_file *f)
{
	bool last;

	pthread_mutex_lock(&files_lock);
	last = --f->refs == 0;
	pthread_mutex_unlock(&files_lock);
	if (!last)
		return;
	rocemu_conn_close(&f->conn);
	rocemu_libc_close(f->read_fd);
	free(f->ids.v);
	free(f);
}

static int file_insert(struct ucma_file *f)
{
	unsigned int i;
	int err = -EMFILE;

	pthread_mutex_lock(&files_lock);
	for (i = 0; i < UCMA_MAX_FILES && err; i++) {
		if (!files[i]) {
			files[i] = f;
			__atomic_store_n(&num_files, num_files + 1, __ATOMIC_RELAXED);
			err = 0;
		}
	}
	pthread_mutex_unlock(&files_lock);
	return err;
}

int rocemu_ucma_open(int flags)
{
	struct ucma_file *f = calloc(1, sizeof(*f));
	struct rocemu_ucma_open_resp resp;
	int err, fd;

	if (!f)
		return -ENOMEM;
	err = rocemu_conn_open(&f->conn);
	if (err)
		goto fail;
	f->conn.name = "rdma_cm";
	err = rocemu_conn_call(&f->conn, ROCEMU_OP_UCMA_OPEN, NULL, &resp, &fd, 1);
	if (err)
		goto fail_conn;
	f->event_fd = fd;
	f->file_id = resp.file_id;
	f->refs = 1;
	/* O_NONBLOCK belongs to the open pipe, so the two descriptors share it. */
	f->read_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (f->read_fd < 0 || ((flags & O_NONBLOCK) && fcntl(fd, F_SETFL, O_NONBLOCK)))
		err = -errno;
	if (!err && !(flags & O_CLOEXEC))
		fcntl(fd, F_SETFD, 0);
	if (!err)
		err = file_insert(f);
	if (!err)
		return fd;
	if (f->read_fd >= 0)
		rocemu_libc_close(f->read_fd);
	rocemu_libc_close(fd);
fail_conn:
	rocemu_conn_close(&f->conn);
fail:
	free(f);
	return err;
}

/*
 * Take one queued event's byte off the pipe: blocks, or EAGAIN when
 * O_NONBLOCK, as the kernel; a signal ends the wait with EINTR, as the
 * kernel's interruptible wait does (restarted under SA_RESTART).
 */
static int event_take(struct ucma_file *f)
{
	char byte;
	ssize_t n = read(f->read_fd, &byte, 1);

	if (n < 0)
		return -errno;
	return n == 1 ? 0 : -ENODEV;	/* end of file: the daemon is gone (ucma_ids.c answers) */
}

/* One write() of the ABI: returns len or -errno. */
static ssize_t ucma_write(struct ucma_file *f, const void *buf, size_t len)
{
	struct rocemu_ucma_write_req req;
	struct rocemu_ucma_write_resp resp;
	struct ucma_file *from = NULL;	/* MIGRATE_ID: the file the id leaves */
	uint32_t moved = 0;
	struct ucma_abi_cmd_hdr hdr;
	int err;

	if (len < sizeof(hdr) || len > sizeof(req.cmd))
		return -EINVAL;
	memcpy(&hdr, buf, sizeof(hdr));
	if (hdr.in + sizeof(hdr) != len)
		return -EINVAL;
	memset(&req, 0, sizeof(req));
	req.len = (uint32_t)len;
	memcpy(req.cmd, buf, len);
	if (hdr.cmd == UCMA_CMD_SET_OPTION) {
		struct ucma_abi_set_option opt;

		if (len < sizeof(opt))
			return -EINVAL;
		memcpy(&opt, buf, sizeof(opt));
		if (opt.optlen > sizeof(req.opt))
			return -EINVAL;
		req.optlen = opt.optlen;
		memcpy(req.opt, (const void *)(uintptr_t)opt.optval, opt.optlen);
	}
	if (hdr.cmd == UCMA_CMD_MIGRATE_ID) {
		struct ucma_abi_migrate_id mig;

		if (len < sizeof(mig))
			return -EINVAL;
		memcpy(&mig, buf, sizeof(mig));
		/* The id's current file, by the daemon's name for it (its descriptor is ours). */
		from = file_get((int)mig.fd, false);
		if (!from)
			return -EBADF;
		mig.fd = from->file_id;
		moved = mig.id;
		memcpy(req.cmd, &mig, sizeof(mig));
	}
	do {
		if (hdr.cmd == UCMA_CMD_GET_EVENT && (err = event_take(f)))
			break;
		err = rocemu_conn_call(&f->conn, ROCEMU_OP_UCMA_WRITE, &req, &resp, NULL, 0);
		/* The event the byte stood for went with its id: wait for the next. */
	} while (hdr.cmd == UCMA_CMD_GET_EVENT && err == -EAGAIN);
	pthread_mutex_lock(&ids_lock);
	if (err == -ENODEV || (err == -EIO && rocemu_conn_is_lost(&f->conn))) {
		/* rocemud is gone, as a device removed: its ids learn it from us. */
		err = rocemu_ucma_ids_lost(&f->ids, req.cmd);
		resp.len = 0;	/* answered in place */
	}
	else if (!err && hdr.cmd == UCMA_CMD_MIGRATE_ID)
		rocemu_ucma_ids_move(&from->ids, &f->ids, moved);
	else if (!err)
		rocemu_ucma_ids_note(&f->ids, req.cmd, resp.data);
	pthread_mutex_unlock(&ids_lock);
	if (from)
		file_put(from);
	if (err)
		return err;
	if (resp.len && resp.response)
		memcpy((void *)(uintptr_t)resp.response, resp.data,
		       resp.len < hdr.out ? resp.len : hdr.out);
	return (ssize_t)len;
}

bool rocemu_ucma_write(int fd, const void *buf, size_t n, ssize_t *ret)
{
	struct ucma_file *f = file_get(fd, false);

	if (__builtin_expect(!f, 1))
		return false;
	*ret = ucma_write(f, buf, n);
	file_put(f);
	if (*ret < 0) {
		errno = (int)-*ret;
		*ret = -1;
	}
	return true;
}

void rocemu_ucma_close(int fd)
{
	struct ucma_file *f = file_get(fd, true);

	if (f) {
		file_put(f);	/* this call's */
		file_put(f);	/* the application's descriptor's */
	}
}

bool rocemu_ucma_fstat(int fd, struct stat64 *st)
{
	struct ucma_file *f = file_get(fd, false);

	if (!f)
		return false;
	file_put(f);
	memset(st, 0, sizeof(*st));
	st->st_mode = S_IFCHR | 0666;
	st->st_nlink = 1;
	st->st_rdev = makedev(MISC_MAJOR, UCMA_MINOR);
	st->st_blksize = 4096;
	return true;
}
