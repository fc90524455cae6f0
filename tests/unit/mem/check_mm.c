/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * A process's address space as the DMA engine reaches it
 * (emulator/mem/mm.c): the contexts of one process share one, found again
 * by the proof of each request; a proof that does not read back where it
 * says, or longer than the proof buffer, is refused with ESRCH, a pid
 * with no process with the errno of /proc; the daemon's own is shared
 * too; copies through /proc/PID/mem move the bytes both ways and fail
 * with EFAULT where the range is not all mapped; the last reference
 * takes it off the emulator's list.
 */
#include <check.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "emulator/mem/mm.h"
#include "tests/unit/fixture.h"

#define NO_SUCH_PID 0x3ffffff0		/* above any pid_max */
#define PROOF_BUF_BYTES 256		/* mm.c reads back at most this much */

static unsigned int mms_listed(void)
{
	const struct rocemu_mm *mm;
	unsigned int n = 0;

	rocemu_list_for_each(mm, &fx.emu.mms, struct rocemu_mm, node)
		n++;
	return n;
}

static struct rocemu_open_device_req proven_req(void)
{
	struct rocemu_open_device_req req = { .pid = (uint32_t)getpid() };

	req.mem = (struct rocemu_mem_proof){ .uffd = -1, .guard_fd = -1 };
	memcpy(req.mem.nonce, "a second context", sizeof(req.mem.nonce));
	return req;
}

/* A second context of the same process: the same address space, one more reference. */
START_TEST(test_contexts_of_a_process_share)
{
	struct rocemu_open_device_req req = proven_req();
	unsigned int refs = fx.client->mm->refs, listed = mms_listed();
	struct rocemu_mm *mm = NULL;

	req.mem.self = (uintptr_t)&req;
	ck_assert_int_eq(rocemu_mm_attach(&fx.emu, getpid(), getuid(), &req, sizeof(req), &req.mem,
					  &mm), 0);
	ck_assert_ptr_eq(mm, fx.client->mm);
	ck_assert_uint_eq(mm->refs, refs + 1);
	ck_assert_uint_eq(mms_listed(), listed);
	rocemu_mm_put(mm);
	ck_assert_uint_eq(fx.client->mm->refs, refs);
}
END_TEST

START_TEST(test_unproven_refused)
{
	struct rocemu_open_device_req req = proven_req(), elsewhere;
	static uint8_t big[PROOF_BUF_BYTES + 8];
	struct rocemu_mem_proof proof = { .self = (uintptr_t)big, .uffd = -1, .guard_fd = -1 };
	unsigned int listed = mms_listed();
	struct rocemu_mm *mm = NULL;

	/* The request is not where the proof says it is. */
	elsewhere = req;
	elsewhere.mem.nonce[0] ^= 1;
	req.mem.self = (uintptr_t)&elsewhere;
	ck_assert_int_eq(rocemu_mm_attach(&fx.emu, getpid(), getuid(), &req, sizeof(req), &req.mem,
					  &mm), -ESRCH);
	/* Genuine, but longer than what is read back. */
	memset(big, 0x42, sizeof(big));
	ck_assert_int_eq(rocemu_mm_attach(&fx.emu, getpid(), getuid(), big, sizeof(big), &proof,
					  &mm), -ESRCH);
	/* No such process: /proc says so. */
	req.mem.self = (uintptr_t)&req;
	ck_assert_int_eq(rocemu_mm_attach(&fx.emu, NO_SUCH_PID, getuid(), &req, sizeof(req),
					  &req.mem, &mm), -ENOENT);
	ck_assert_ptr_null(mm);
	ck_assert_uint_eq(mms_listed(), listed);
}
END_TEST

/* The daemon's own address space: the one of its pid, shared, counted. */
START_TEST(test_self_shared)
{
	struct rocemu_mm *self = rocemu_mm_self(&fx.emu), *again;

	ck_assert_ptr_nonnull(self);
	ck_assert_int_eq(self->pid, getpid());
	ck_assert_int_lt(self->uffd, 0);
	again = rocemu_mm_self(&fx.emu);
	ck_assert_ptr_eq(again, self);
	rocemu_mm_put(again);
	rocemu_mm_put(self);
}
END_TEST

START_TEST(test_copy_both_ways)
{
	static uint8_t target[64];
	uint8_t out[sizeof(target)], in[sizeof(target)];
	struct iovec local_out[2] = { { out, 16 }, { out + 16, sizeof(out) - 16 } };
	struct iovec local_in = { in, sizeof(in) };

	for (unsigned int i = 0; i < sizeof(out); i++)
		out[i] = (uint8_t)(i * 7 + 1);
	ck_assert_int_eq(rocemu_mm_copy(fx.client->mm, local_out, 2, (uintptr_t)target,
					sizeof(target), true), 0);
	ck_assert_mem_eq(target, out, sizeof(out));
	memset(in, 0, sizeof(in));
	ck_assert_int_eq(rocemu_mm_copy(fx.client->mm, &local_in, 1, (uintptr_t)target,
					sizeof(target), false), 0);
	ck_assert_mem_eq(in, out, sizeof(in));
}
END_TEST

/* A range running into a hole fails whole, as EFAULT, not ESRCH; nothing mapped at all as well. */
START_TEST(test_copy_into_hole)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *two = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			    -1, 0);
	uint8_t buf[32];
	struct iovec local = { buf, sizeof(buf) };

	ck_assert_ptr_ne(two, MAP_FAILED);
	ck_assert_int_eq(munmap(two + page, page), 0);
	memset(buf, 0x11, sizeof(buf));
	ck_assert_int_eq(rocemu_mm_copy(fx.client->mm, &local, 1, (uintptr_t)(two + page - 16),
					sizeof(buf), true), -EFAULT);
	ck_assert_int_eq(rocemu_mm_copy(fx.client->mm, &local, 1, (uintptr_t)(two + page),
					sizeof(buf), false), -EFAULT);
	ck_assert_int_eq(rocemu_mm_copy(fx.client->mm, &local, 1, (uintptr_t)(two + page - 32),
					sizeof(buf), true), 0);
	ck_assert_mem_eq(two + page - 32, buf, sizeof(buf));
	munmap(two, page);
}
END_TEST

/* Another process's address space, its last reference put: off the list. */
START_TEST(test_last_put_unlists)
{
	struct rocemu_open_device_req req = proven_req();
	struct rocemu_mm *mm, *again;
	unsigned int listed = mms_listed();
	int go[2];
	pid_t pid;

	req.mem.self = (uintptr_t)&req;
	ck_assert_int_eq(pipe(go), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char c;

		_exit(read(go[0], &c, 1) == 1 ? 0 : 1);
	}
	ck_assert_int_eq(rocemu_mm_attach(&fx.emu, pid, getuid(), &req, sizeof(req), &req.mem,
					  &mm), 0);
	ck_assert_ptr_ne(mm, fx.client->mm);
	ck_assert_int_eq(mm->pid, pid);
	ck_assert_uint_eq(mms_listed(), listed + 1);
	ck_assert_int_eq(rocemu_mm_attach(&fx.emu, pid, getuid(), &req, sizeof(req), &req.mem,
					  &again), 0);
	ck_assert_ptr_eq(again, mm);
	rocemu_mm_put(again);
	ck_assert_uint_eq(mms_listed(), listed + 1);
	rocemu_mm_put(mm);
	ck_assert_uint_eq(mms_listed(), listed);
	ck_assert_int_eq(write(go[1], "x", 1), 1);
	ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
	close(go[0]);
	close(go[1]);
}
END_TEST

static Suite *mm_suite(void)
{
	Suite *s = suite_create("mm");
	TCase *tc = tcase_create("mm");

	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_add_test(tc, test_contexts_of_a_process_share);
	tcase_add_test(tc, test_unproven_refused);
	tcase_add_test(tc, test_self_shared);
	tcase_add_test(tc, test_copy_both_ways);
	tcase_add_test(tc, test_copy_into_hole);
	tcase_add_test(tc, test_last_put_unlists);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return fx_suite_run(mm_suite());
}
