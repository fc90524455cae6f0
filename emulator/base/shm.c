/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/base/shm.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

size_t rocemu_page_align(size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	return (len + page - 1) & ~(page - 1);
}

int rocemu_shm_create(const char *name, size_t size, struct rocemu_shm *shm)
{
	void *addr;
	int fd, err;

	size = rocemu_page_align(size ? size : 1);
	fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)size) ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)) {
		err = -errno;
		close(fd);
		return err;
	}
	addr = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (addr == MAP_FAILED) {
		err = -errno;
		close(fd);
		return err;
	}
	shm->addr = addr;
	shm->size = size;
	return fd;
}

void rocemu_shm_destroy(struct rocemu_shm *shm)
{
	if (shm->addr)
		munmap(shm->addr, shm->size);
	shm->addr = NULL;
	shm->size = 0;
}
