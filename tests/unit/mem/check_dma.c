/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The DMA engine (emulator/mem/dma.c) over the test's own memory: every access
 * is checked (key, owner, PD, rights, bounds in the key's iova space)
 * before any byte moves, with the distinct error of each check; SGE lists
 * split into iovecs; the copy itself by pid through the client's guard
 * (emulator/mem/mm_guard.h), else through /proc/PID/mem.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "emulator/mem/dma.h"
#include "emulator/mem/mm.h"
#include "emulator/mem/mm_guard.h"
#include "emulator/mem/mm_watch.h"
#include "emulator/obj/qp.h"
#include "tests/unit/fixture.h"

#define IOV_SLOTS 4

static struct rocemu_dma_seg seg;
static unsigned int nseg;

static int rkey_check(uint32_t rkey, const void *va, uint64_t len, unsigned int access)
{
	return rocemu_dma_rkey(fx_emu_qp()->mem, rkey, (uintptr_t)va, len, access,
			       &seg, 1, &nseg);
}

static int sgl_check(const struct rocemu_sge *sge, unsigned int nsge, uint64_t offset,
		     uint64_t len, unsigned int access, struct rocemu_dma_seg *iov, unsigned int max,
		     unsigned int *n)
{
	return rocemu_dma_sgl(fx_emu_qp()->mem, sge, nsge, offset, len, access, iov,
			      max, n);
}

START_TEST(test_rkey_in_bounds)
{
	ck_assert_int_eq(rkey_check(fx.rkey, fx.buf + 100, 200, IBV_ACCESS_REMOTE_WRITE), 0);
	ck_assert_ptr_eq(seg.iov.iov_base, fx.buf + 100);
	ck_assert_int_eq(rkey_check(fx.rkey, fx.buf, FX_BUF_BYTES, IBV_ACCESS_REMOTE_READ), 0);
	ck_assert_ptr_eq(seg.iov.iov_base, fx.buf);
}
END_TEST

START_TEST(test_rkey_out_of_bounds)
{
	const unsigned int rw = IBV_ACCESS_REMOTE_WRITE;

	ck_assert_int_eq(rkey_check(fx.rkey, fx.buf + FX_BUF_BYTES - 4, 8, rw), -ERANGE);
	ck_assert_int_eq(rkey_check(fx.rkey, fx.buf - 1, 8, rw), -ERANGE);
	ck_assert_int_eq(rkey_check(fx.rkey, fx.buf, FX_BUF_BYTES + 1, rw), -ERANGE);
	/* va + len wrapping around 2^64 is out of bounds too. */
	ck_assert_int_eq(rocemu_dma_rkey(fx_emu_qp()->mem, fx.rkey, UINT64_MAX - 3,
					 8, rw, &seg, 1, &nseg), -ERANGE);
	ck_assert_int_eq(rkey_check(fx.rkey, fx.buf + 8, UINT64_MAX, rw), -ERANGE);
}
END_TEST

START_TEST(test_unknown_key)
{
	ck_assert_int_eq(rkey_check(fx.rkey ^ 0x01, fx.buf, 8, IBV_ACCESS_REMOTE_READ), -ENOKEY);
	ck_assert_int_eq(rkey_check(fx.rkey + 0x1000, fx.buf, 8, IBV_ACCESS_REMOTE_READ),
			 -ENOKEY);
}
END_TEST

START_TEST(test_wrong_pd)
{
	uint32_t pd2 = fx_pd_alloc(fx.client);
	uint32_t key = fx_mr_reg(fx.client, pd2, fx.buf, 4096, IBV_ACCESS_LOCAL_WRITE |
				 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	const struct rocemu_sge sge = { .addr = (uintptr_t)fx.buf, .length = 16, .key = key };
	struct rocemu_dma_seg iov[IOV_SLOTS];
	unsigned int n;

	ck_assert_int_eq(rkey_check(key, fx.buf, 16, IBV_ACCESS_REMOTE_READ), -EPERM);
	ck_assert_int_eq(sgl_check(&sge, 1, 0, 16, 0, iov, IOV_SLOTS, &n), -EPERM);
}
END_TEST

START_TEST(test_wrong_access)
{
	uint32_t ro = fx_mr_reg(fx.client, fx.pdn, fx.buf, 4096, 0);
	uint32_t lw = fx_mr_reg(fx.client, fx.pdn, fx.buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	const struct rocemu_sge sge = { .addr = (uintptr_t)fx.buf, .length = 16, .key = ro };
	struct rocemu_dma_seg iov[IOV_SLOTS];
	unsigned int n;

	ck_assert_int_eq(rkey_check(ro, fx.buf, 16, IBV_ACCESS_REMOTE_READ), -EACCES);
	ck_assert_int_eq(rkey_check(lw, fx.buf, 16, IBV_ACCESS_REMOTE_WRITE), -EACCES);
	ck_assert_int_eq(rkey_check(lw, fx.buf, 16, IBV_ACCESS_REMOTE_ATOMIC), -EACCES);
	/* Local reads need no right; local writes need LOCAL_WRITE. */
	ck_assert_int_eq(sgl_check(&sge, 1, 0, 16, 0, iov, IOV_SLOTS, &n), 0);
	ck_assert_int_eq(sgl_check(&sge, 1, 0, 16, IBV_ACCESS_LOCAL_WRITE, iov, IOV_SLOTS, &n),
			 -EACCES);
}
END_TEST

/* An lkey of another context is no key at all for this QP. */
START_TEST(test_lkey_of_other_client)
{
	struct rocemu_client *other = fx_client_new();
	uint32_t key = fx_mr_reg(other, fx_pd_alloc(other), fx.buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	const struct rocemu_sge sge = { .addr = (uintptr_t)fx.buf, .length = 16, .key = key };
	struct rocemu_dma_seg iov[IOV_SLOTS];
	unsigned int n;

	ck_assert_int_eq(sgl_check(&sge, 1, 0, 16, 0, iov, IOV_SLOTS, &n), -ENOKEY);
}
END_TEST

START_TEST(test_sgl_split)
{
	const struct rocemu_sge sge[3] = {
		{ .addr = (uintptr_t)fx.buf, .length = 10, .key = fx.lkey },
		{ .addr = (uintptr_t)(fx.buf + 100), .length = 20, .key = fx.lkey },
		{ .addr = (uintptr_t)(fx.buf + 200), .length = 30, .key = fx.lkey },
	};
	struct rocemu_dma_seg iov[IOV_SLOTS];
	unsigned int n;

	/* Bytes [15, 45): the last 15 of the second SGE and the first 15 of the third. */
	ck_assert_int_eq(sgl_check(sge, 3, 15, 30, IBV_ACCESS_LOCAL_WRITE, iov, IOV_SLOTS, &n),
			 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_ptr_eq(iov[0].iov.iov_base, fx.buf + 105);
	ck_assert_uint_eq(iov[0].iov.iov_len, 15);
	ck_assert_ptr_eq(iov[1].iov.iov_base, fx.buf + 200);
	ck_assert_uint_eq(iov[1].iov.iov_len, 15);
	/* More bytes than the list holds, or than the iovecs given. */
	ck_assert_int_eq(sgl_check(sge, 3, 0, 61, 0, iov, IOV_SLOTS, &n), -EMSGSIZE);
	ck_assert_int_eq(sgl_check(sge, 3, 0, 60, 0, iov, 2, &n), -EMSGSIZE);
}
END_TEST

/* After LOCAL_INV of its key an MR is reached by no key. */
START_TEST(test_invalidated_key)
{
	uint32_t key = fx_mr_reg(fx.client, fx.pdn, fx.buf, 4096, IBV_ACCESS_LOCAL_WRITE |
				 IBV_ACCESS_REMOTE_READ);
	const struct fx_wr inv = { .opcode = MLX5_OPCODE_LOCAL_INVAL,
				   .flags = MLX5_WQE_CTRL_CQ_UPDATE, .imm = htobe32(key) };

	ck_assert_int_eq(rkey_check(key, fx.buf, 16, IBV_ACCESS_REMOTE_READ), 0);
	fx_post_send(&inv);
	fx_doorbell();
	fx_expect_cqe(&fx.scq, MLX5_CQE_REQ, 0, 0);
	ck_assert_int_eq(rkey_check(key, fx.buf, 16, IBV_ACCESS_REMOTE_READ), -ENOKEY);
}
END_TEST

/* The copy reaches the owner's memory (here the test's own) and fails on an unmapped page. */
START_TEST(test_copy)
{
	char out[] = "written", in[sizeof(out)] = "";
	struct iovec local = { out, sizeof(out) };
	struct rocemu_mm *self = fx.client->mm;
	struct rocemu_dma_seg remote = { { fx.buf + 300, sizeof(out) }, self, ROCEMU_MM_FOLLOWS };
	long page = sysconf(_SC_PAGESIZE);
	void *hole = mmap(NULL, (size_t)page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ck_assert_int_eq(rocemu_dma_copy(self, &local, 1, &remote, 1, true), 0);
	ck_assert_str_eq((char *)fx.buf + 300, out);
	local.iov_base = in;
	ck_assert_int_eq(rocemu_dma_copy(self, &local, 1, &remote, 1, false), 0);
	ck_assert_str_eq(in, out);
	ck_assert_ptr_ne(hole, MAP_FAILED);
	remote.iov.iov_base = hole;
	ck_assert_int_eq(rocemu_dma_copy(self, &local, 1, &remote, 1, true), -EFAULT);
	munmap(hole, (size_t)page);
}
END_TEST

/*
 * An address space whose process exited, reaped or still a zombie, is
 * gone (-ESRCH), not a failed copy; a process that takes its pid later is
 * never reached through it, nor is one that proves nothing.
 */
START_TEST(test_copy_to_gone_process)
{
	char out[8] = "gone";
	struct iovec local = { out, sizeof(out) };
	struct rocemu_dma_seg remote = { { out, sizeof(out) }, NULL, 0 };
	struct rocemu_open_device_req req = { .pid = 1 };
	struct rocemu_mm *other;
	int go[2];
	siginfo_t info;
	pid_t pid;

	req.mem = (struct rocemu_mem_proof){ .self = (uintptr_t)&req, .uffd = -1, .guard_fd = -1 };
	memcpy(req.mem.nonce, "child's request", sizeof(req.mem.nonce));
	ck_assert_int_eq(pipe(go), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char c;

		_exit(read(go[0], &c, 1) == 1 ? 0 : 1);
	}
	/* The child holds the request where it says (a copy of ours); nothing else does. */
	ck_assert_int_eq(rocemu_mm_attach(&fx.emu, pid, getuid(), &req, sizeof(req), &req.mem, &remote.mm), 0);
	req.pid = 2;
	ck_assert_int_eq(rocemu_mm_attach(&fx.emu, pid, getuid(), &req, sizeof(req), &req.mem, &other), -ESRCH);
	ck_assert_int_eq(write(go[1], "x", 1), 1);
	/* Exited, not reaped yet: a zombie has no memory left. */
	ck_assert_int_eq(waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT), 0);
	ck_assert_int_eq(rocemu_dma_copy(remote.mm, &local, 1, &remote, 1, true), -ESRCH);
	ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
	ck_assert_int_eq(rocemu_dma_copy(remote.mm, &local, 1, &remote, 1, false), -ESRCH);
	/* Memory of a process that is not the QP's (an imported MR's) gone: a failed copy. */
	ck_assert_int_eq(rocemu_dma_copy(fx.client->mm, &local, 1, &remote, 1, false), -EFAULT);
	rocemu_mm_put(remote.mm);
	close(go[0]);
	close(go[1]);
}
END_TEST

/* A child's command loop: 'f' maps a page of its own over the guard at at; 'q' exits. */
static void guard_child(int cmd, int reply, void *at)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	char c;

	while (read(cmd, &c, 1) == 1 && c != 'q') {
		if (c == 'f' && mmap(at, page, PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != at)
			_exit(1);
		if (write(reply, &c, 1) != 1)
			_exit(1);
	}
	_exit(0);
}

/*
 * A process with a guard is reached by pid through it, both ways, when it
 * is of the daemon's user; one of another user never is. When the
 * guard's address holds another page (as in another process would), the
 * write that reached it is seen, the guard is given up, and the copy is
 * made through /proc/PID/mem, into the right memory.
 */
START_TEST(test_copy_by_pid_guard)
{
	static char target[64];
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	char out[sizeof(target)], in[sizeof(target)], c;
	struct iovec local_out = { out, sizeof(out) }, local_in = { in, sizeof(in) };
	struct rocemu_dma_seg remote = { { target, sizeof(target) }, NULL, 0 };
	struct rocemu_open_device_req req = { .pid = 3 };
	int cmd[2], reply[2], fd;
	void *guard;
	pid_t pid;

	fd = memfd_create("guard", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, (off_t)page), 0);
	ck_assert_int_eq(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW), 0);
	guard = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ck_assert_ptr_ne(guard, MAP_FAILED);
	req.mem = (struct rocemu_mem_proof){ .self = (uintptr_t)&req, .guard = (uintptr_t)guard,
					     .uffd = -1, .guard_fd = fd };
	memcpy(req.mem.nonce, "guarded request", sizeof(req.mem.nonce));
	ck_assert_int_eq(pipe(cmd), 0);
	ck_assert_int_eq(pipe(reply), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		guard_child(cmd[0], reply[1], guard);
	ck_assert_int_eq(rocemu_mm_attach(&fx.emu, pid, geteuid() + 1, &req, sizeof(req),
					  &req.mem, &remote.mm), 0);
	ck_assert_ptr_null(remote.mm->guard);
	rocemu_mm_put(remote.mm);
	ck_assert_int_eq(rocemu_mm_attach(&fx.emu, pid, geteuid(), &req, sizeof(req), &req.mem,
					  &remote.mm), 0);
	ck_assert_ptr_nonnull(remote.mm->guard);
	memset(out, 'p', sizeof(out));
	ck_assert_int_eq(rocemu_dma_copy(remote.mm, &local_out, 1, &remote, 1, true), 0);
	ck_assert_int_eq(rocemu_dma_copy(remote.mm, &local_in, 1, &remote, 1, false), 0);
	ck_assert_mem_eq(in, out, sizeof(in));
	ck_assert_ptr_nonnull(remote.mm->guard);
	/* Another page at the guard's address: the next write finds out. */
	ck_assert_int_eq(write(cmd[1], "f", 1), 1);
	ck_assert_int_eq(read(reply[0], &c, 1), 1);
	memset(out, 'm', sizeof(out));
	ck_assert_int_eq(rocemu_dma_copy(remote.mm, &local_out, 1, &remote, 1, true), 0);
	ck_assert_ptr_null(remote.mm->guard);
	memset(in, 0, sizeof(in));
	ck_assert_int_eq(rocemu_dma_copy(remote.mm, &local_in, 1, &remote, 1, false), 0);
	ck_assert_mem_eq(in, out, sizeof(in));
	ck_assert_int_eq(write(cmd[1], "q", 1), 1);
	ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
	rocemu_mm_put(remote.mm);
	munmap(guard, page);
	close(fd);
	close(cmd[0]);
	close(cmd[1]);
	close(reply[0]);
	close(reply[1]);
}
END_TEST

static Suite *dma_suite(void)
{
	Suite *s = suite_create("dma");
	TCase *tc = tcase_create("dma");

	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_add_test(tc, test_rkey_in_bounds);
	tcase_add_test(tc, test_rkey_out_of_bounds);
	tcase_add_test(tc, test_unknown_key);
	tcase_add_test(tc, test_wrong_pd);
	tcase_add_test(tc, test_wrong_access);
	tcase_add_test(tc, test_lkey_of_other_client);
	tcase_add_test(tc, test_sgl_split);
	tcase_add_test(tc, test_invalidated_key);
	tcase_add_test(tc, test_copy);
	tcase_add_test(tc, test_copy_to_gone_process);
	tcase_add_test(tc, test_copy_by_pid_guard);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return fx_suite_run(dma_suite());
}
