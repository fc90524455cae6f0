/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Copies by pid through a client's guard (emulator/mem/mm_guard.c), the
 * test process being the client: a guard is taken only from a sealed
 * memfd of at least a page, mapped page-aligned at the address the proof
 * names, for a process of the daemon's user when copies by pid are
 * allowed, and only when the token written through the daemon's map
 * reads back at that address; copies through it move the bytes both
 * ways; another page at the guard's address fails a read (guard kept) and
 * a write (guard given up), each then to be made through /proc/PID/mem.
 */
#include <check.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "emulator/mem/mm.h"
#include "emulator/mem/mm_guard.h"
#include "tests/unit/fixture.h"

static size_t page;
static int guard_fd;
static uint8_t *guard;			/* the client's map of the guard page */

/* A memfd of bytes, sealed against shrinking when seal says. */
static int memfd_of(size_t bytes, bool seal)
{
	int fd = memfd_create("guard", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, (off_t)bytes), 0);
	if (seal)
		ck_assert_int_eq(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW), 0);
	return fd;
}

static void *map_shared(int fd)
{
	void *p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	ck_assert_ptr_ne(p, MAP_FAILED);
	return p;
}

static void setup(void)
{
	fx_setup();
	page = (size_t)sysconf(_SC_PAGESIZE);
	guard_fd = memfd_of(page, true);
	guard = map_shared(guard_fd);
}

static void teardown(void)
{
	fx_teardown();
	munmap(guard, page);
	close(guard_fd);
}

static struct rocemu_mm *mm(void)
{
	return fx.client->mm;
}

static struct rocemu_mem_proof proof_of(void *at, int fd)
{
	return (struct rocemu_mem_proof){ .guard = (uintptr_t)at, .uffd = -1, .guard_fd = fd };
}

/* A copy by pid of bytes between local and target through the guard; its result. */
static bool guard_copy(void *local, void *target, size_t bytes, bool write)
{
	struct iovec l[2] = { { NULL, 0 }, { local, bytes } }, r[2] = { { NULL, 0 },
									 { target, bytes } };

	return rocemu_mm_guard_copy(mm(), l, 2, r, 2, bytes, write);
}

static void expect_no_guard(void)
{
	ck_assert_ptr_null(mm()->guard);
	ck_assert_uint_eq(mm()->guard_addr, 0);
}

START_TEST(test_taken_and_copies)
{
	const struct rocemu_mem_proof proof = proof_of(guard, guard_fd);
	static uint8_t target[48];
	uint8_t out[sizeof(target)], in[sizeof(target)];
	uint64_t seen;

	rocemu_mm_guard_take(mm(), geteuid(), &proof);
	ck_assert_ptr_nonnull(mm()->guard);
	ck_assert_uint_eq(mm()->guard_addr, (uintptr_t)guard);
	memset(out, 0xa7, sizeof(out));
	ck_assert(guard_copy(out, target, sizeof(out), true));
	ck_assert_mem_eq(target, out, sizeof(out));
	/* The write's token came through the client's own page. */
	memcpy(&seen, guard, sizeof(seen));
	ck_assert_uint_eq(seen, mm()->guard_token);
	memset(in, 0, sizeof(in));
	ck_assert(guard_copy(in, target, sizeof(in), false));
	ck_assert_mem_eq(in, out, sizeof(in));
	rocemu_mm_guard_drop(mm());
	expect_no_guard();
	ck_assert(!guard_copy(in, target, sizeof(in), false));
}
END_TEST

/* Without a guard that proves, every copy goes through /proc/PID/mem. */
START_TEST(test_refused)
{
	struct rocemu_mem_proof proof = proof_of(guard, guard_fd);
	int unsealed = memfd_of(page, false), small = memfd_of(page / 2, true);
	void *other = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t b = 0;

	ck_assert_ptr_ne(other, MAP_FAILED);
	rocemu_mm_guard_take(mm(), geteuid() + 1, &proof);
	expect_no_guard();
	fx.emu.dma_by_mem = true;
	rocemu_mm_guard_take(mm(), geteuid(), &proof);
	expect_no_guard();
	fx.emu.dma_by_mem = false;
	proof = proof_of(guard, -1);
	rocemu_mm_guard_take(mm(), geteuid(), &proof);
	expect_no_guard();
	proof = proof_of(guard + 8, guard_fd);
	rocemu_mm_guard_take(mm(), geteuid(), &proof);
	expect_no_guard();
	proof = proof_of(guard, unsealed);
	rocemu_mm_guard_take(mm(), geteuid(), &proof);
	expect_no_guard();
	proof = proof_of(guard, small);
	rocemu_mm_guard_take(mm(), geteuid(), &proof);
	expect_no_guard();
	/* The page at the address named is not the memfd's: the token never reads back. */
	proof = proof_of(other, guard_fd);
	rocemu_mm_guard_take(mm(), geteuid(), &proof);
	expect_no_guard();
	ck_assert(!guard_copy(&b, other, 1, true));
	munmap(other, page);
	close(unsealed);
	close(small);
}
END_TEST

/*
 * Another page at the guard's address (as in a process that took the
 * pid): a read finds no token and fails, the guard kept; a write finds
 * its token missing from the daemon's map and gives the guard up.
 */
START_TEST(test_replaced_page_detected)
{
	const struct rocemu_mem_proof proof = proof_of(guard, guard_fd);
	static uint8_t target[16];
	uint8_t buf[sizeof(target)];

	rocemu_mm_guard_take(mm(), geteuid(), &proof);
	ck_assert_ptr_nonnull(mm()->guard);
	ck_assert_ptr_eq(mmap(guard, page, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0), guard);
	ck_assert(!guard_copy(buf, target, sizeof(buf), false));
	ck_assert_ptr_nonnull(mm()->guard);
	memset(buf, 0x3c, sizeof(buf));
	ck_assert(!guard_copy(buf, target, sizeof(buf), true));
	expect_no_guard();
	ck_assert(!guard_copy(buf, target, sizeof(buf), true));
}
END_TEST

static Suite *mm_guard_suite(void)
{
	Suite *s = suite_create("mm_guard");
	TCase *tc = tcase_create("mm_guard");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_taken_and_copies);
	tcase_add_test(tc, test_refused);
	tcase_add_test(tc, test_replaced_page_detected);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return fx_suite_run(mm_guard_suite());
}
