/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * What a process takes away under a plain MR (emulator/mem/mm_watch.c),
 * with a userfaultfd of the test process as the shim makes it: only a
 * userfaultfd is taken; a registered range's munmap or MADV_DONTNEED,
 * once the loop has read its report, leaves the range unreachable for
 * the generation registered before it (and for an MR's DMA) while the
 * rest of the range and a newer generation still reach memory; a range
 * that cannot be watched follows the mapping; a range no MR watches any
 * more is unregistered, so its munmap waits for no one, while one another
 * MR still covers stays watched. The unmapping thread waits for the loop
 * to read its report, as a client's does for the daemon. Skipped (77)
 * where the kernel gives no userfaultfd.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "emulator/mem/dma.h"
#include "emulator/mem/mm.h"
#include "emulator/mem/mm_watch.h"
#include "emulator/mem/pd_mr.h"
#include "emulator/obj/qp.h"
#include "tests/unit/fixture.h"

#define REGION_PAGES 4
#define RUN_STEP_NS (1000 * 1000ull)
#define RUN_STEPS_MAX 10000u		/* 10 s of loop at most: a deadline, not a pace */
#define RW_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

static size_t page;
static uint8_t *region;

/* A userfaultfd reporting unmaps, as lib/mem_proof.c makes it; -1 where there is none. */
static int uffd_open(void)
{
	struct uffdio_api api = { .api = UFFD_API,
				  .features = UFFD_FEATURE_EVENT_UNMAP | UFFD_FEATURE_EVENT_REMOVE |
					      UFFD_FEATURE_EVENT_REMAP };
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);

	if (fd >= 0 && ioctl(fd, UFFDIO_API, &api)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static struct rocemu_mm *mm(void)
{
	return fx.client->mm;
}

/* The fixture, its client's address space watched through a userfaultfd of ours. */
static void setup(void)
{
	int uffd;

	fx_setup();
	page = (size_t)sysconf(_SC_PAGESIZE);
	uffd = uffd_open();
	ck_assert_int_ge(uffd, 0);
	ck_assert_int_lt(mm()->uffd, 0);
	mm()->uffd = rocemu_mm_watch_take(getpid(), uffd);
	close(uffd);
	ck_assert_int_ge(mm()->uffd, 0);
	rocemu_mm_watch_start(mm());
	region = mmap(NULL, REGION_PAGES * page, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(region, MAP_FAILED);
	memset(region, 0x5a, REGION_PAGES * page);
}

/* Teardown closes the watch (emu_fini) before anything of ours is unmapped. */
static void teardown(void)
{
	fx_teardown();
	munmap(region, REGION_PAGES * page);
}

struct take_away {
	void *addr;
	size_t len;
	bool dontneed;			/* madvise(MADV_DONTNEED), else munmap */
	int result;
	bool done;
};

static void *take_away_thread(void *arg)
{
	struct take_away *t = arg;

	t->result = t->dontneed ? madvise(t->addr, t->len, MADV_DONTNEED) : munmap(t->addr, t->len);
	__atomic_store_n(&t->done, true, __ATOMIC_RELEASE);
	return NULL;
}

/* Another thread takes [addr, addr + len) away while the loop runs, until it returns. */
static void take_away(void *addr, size_t len, bool dontneed)
{
	struct take_away t = { addr, len, dontneed, -1, false };
	pthread_t thread;
	unsigned int step;

	ck_assert_int_eq(pthread_create(&thread, NULL, take_away_thread, &t), 0);
	for (step = 0; step < RUN_STEPS_MAX && !__atomic_load_n(&t.done, __ATOMIC_ACQUIRE); step++)
		fx_run(RUN_STEP_NS);
	ck_assert_msg(__atomic_load_n(&t.done, __ATOMIC_ACQUIRE), "still waiting for its report");
	ck_assert_int_eq(pthread_join(thread, NULL), 0);
	ck_assert_int_eq(t.result, 0);
}

START_TEST(test_take_only_userfaultfd)
{
	int pipefd[2], uffd = uffd_open(), fd;

	ck_assert_int_ge(uffd, 0);
	ck_assert_int_eq(pipe(pipefd), 0);
	ck_assert_int_eq(rocemu_mm_watch_take(getpid(), pipefd[0]), -1);
	ck_assert_int_eq(rocemu_mm_watch_take(getpid(), -1), -1);
	fd = rocemu_mm_watch_take(getpid(), uffd);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_ne(fd, uffd);
	close(fd);
	close(uffd);
	close(pipefd[0]);
	close(pipefd[1]);
}
END_TEST

/*
 * munmap of a page of a watched range: unreachable for the generation
 * registered before it, the other pages not; a newer generation reaches it.
 */
START_TEST(test_unmap_ends_older_generation)
{
	uint64_t gen = rocemu_mm_watch_range(mm(), (uintptr_t)region, REGION_PAGES * page);
	uint8_t *hole = region + page;

	ck_assert_uint_ne(gen, ROCEMU_MM_FOLLOWS);
	ck_assert(rocemu_mm_reachable(mm(), (uintptr_t)hole, 8, gen));
	take_away(hole, page, false);
	ck_assert_uint_eq(mm()->gen, gen + 1);
	ck_assert(!rocemu_mm_reachable(mm(), (uintptr_t)hole, 8, gen));
	ck_assert(!rocemu_mm_reachable(mm(), (uintptr_t)region, REGION_PAGES * page, gen));
	ck_assert(!rocemu_mm_reachable(mm(), (uintptr_t)hole - 4, 8, gen));
	ck_assert(rocemu_mm_reachable(mm(), (uintptr_t)region, page, gen));
	ck_assert(rocemu_mm_reachable(mm(), (uintptr_t)hole + page, 2 * page, gen));
	ck_assert(rocemu_mm_reachable(mm(), (uintptr_t)hole, 8, mm()->gen));
	ck_assert(rocemu_mm_reachable(mm(), (uintptr_t)hole, 8, ROCEMU_MM_FOLLOWS));
	/* Mapped again there: still not what the older generation registered. */
	ck_assert_ptr_eq(mmap(hole, page, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0), hole);
	ck_assert(!rocemu_mm_reachable(mm(), (uintptr_t)hole, 8, gen));
}
END_TEST

/* An MR over the range: a remote WRITE into the unmapped page fails, one beside it lands. */
START_TEST(test_mr_stops_reaching_unmapped_page)
{
	const struct rocemu_reg_mr_req req = { .pdn = fx.pdn, .access = RW_ACCESS,
					       .addr = (uintptr_t)region,
					       .length = REGION_PAGES * page,
					       .iova = (uintptr_t)region };
	struct rocemu_mem_owner owner = fx_emu_qp()->mem;
	struct rocemu_reg_mr_resp resp;
	struct rocemu_dma_seg seg;
	uint8_t data[8] = "written";
	struct iovec local = { data, sizeof(data) };
	unsigned int n;

	ck_assert_int_eq(rocemu_mr_reg(fx.client, &req, &resp), 0);
	take_away(region + page, page, false);
	ck_assert_ptr_eq(mmap(region + page, page, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0), region + page);
	ck_assert_int_eq(rocemu_dma_rkey(owner, resp.rkey, (uintptr_t)(region + page), sizeof(data),
					 IBV_ACCESS_REMOTE_WRITE, &seg, 1, &n), 0);
	ck_assert_int_eq(rocemu_dma_copy(mm(), &local, 1, &seg, 1, true), -EFAULT);
	ck_assert_uint_eq(region[page], 0);
	ck_assert_int_eq(rocemu_dma_rkey(owner, resp.rkey, (uintptr_t)region, sizeof(data),
					 IBV_ACCESS_REMOTE_WRITE, &seg, 1, &n), 0);
	ck_assert_int_eq(rocemu_dma_copy(mm(), &local, 1, &seg, 1, true), 0);
	ck_assert_mem_eq(region, data, sizeof(data));
	/* An MR registered after the unmap reaches the new page. */
	ck_assert_int_eq(rocemu_mr_reg(fx.client, &req, &resp), 0);
	ck_assert_int_eq(rocemu_dma_rkey(owner, resp.rkey, (uintptr_t)(region + page), sizeof(data),
					 IBV_ACCESS_REMOTE_WRITE, &seg, 1, &n), 0);
	ck_assert_int_eq(rocemu_dma_copy(mm(), &local, 1, &seg, 1, true), 0);
	ck_assert_mem_eq(region + page, data, sizeof(data));
}
END_TEST

/* Pages dropped by MADV_DONTNEED are reported as well: the old contents are gone. */
START_TEST(test_dontneed_reported)
{
	uint64_t gen = rocemu_mm_watch_range(mm(), (uintptr_t)region, REGION_PAGES * page);

	take_away(region + 2 * page, page, true);
	ck_assert_uint_eq(mm()->gen, gen + 1);
	ck_assert(!rocemu_mm_reachable(mm(), (uintptr_t)(region + 2 * page), page, gen));
	ck_assert(rocemu_mm_reachable(mm(), (uintptr_t)(region + page), page, gen));
}
END_TEST

/* Nothing mapped there, or no userfaultfd: the range follows the mapping, always reachable. */
START_TEST(test_unwatchable_follows)
{
	void *hole = mmap(NULL, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int uffd;

	ck_assert_ptr_ne(hole, MAP_FAILED);
	ck_assert_int_eq(munmap(hole, page), 0);
	ck_assert_uint_eq(rocemu_mm_watch_range(mm(), (uintptr_t)hole, page), ROCEMU_MM_FOLLOWS);
	uffd = mm()->uffd;
	mm()->uffd = -1;
	ck_assert_uint_eq(rocemu_mm_watch_range(mm(), (uintptr_t)region, page), ROCEMU_MM_FOLLOWS);
	mm()->uffd = uffd;
	ck_assert(rocemu_mm_reachable(mm(), (uintptr_t)hole, page, ROCEMU_MM_FOLLOWS));
}
END_TEST

/* No MR watches the range any more: unregistered, its munmap waits for nothing and reports nothing. */
START_TEST(test_unwatched_range_not_reported)
{
	uint64_t gen = rocemu_mm_watch_range(mm(), (uintptr_t)region, 2 * page);

	rocemu_mm_unwatch_range(mm(), (uintptr_t)region, 2 * page);
	/* No loop runs: the munmap returns by itself. */
	ck_assert_int_eq(munmap(region, page), 0);
	fx_turn();
	ck_assert_uint_eq(mm()->gen, gen);
	ck_assert(rocemu_mm_reachable(mm(), (uintptr_t)region, page, gen));
}
END_TEST

/* The last MR over a range deregistered: no longer watched, its munmap waits for nothing. */
START_TEST(test_dereg_unwatches)
{
	const struct rocemu_reg_mr_req req = { .pdn = fx.pdn, .access = RW_ACCESS,
					       .addr = (uintptr_t)region, .length = 2 * page,
					       .iova = (uintptr_t)region };
	struct rocemu_reg_mr_resp resp;
	uint64_t gen;

	ck_assert_int_eq(rocemu_mr_reg(fx.client, &req, &resp), 0);
	gen = mm()->gen;
	ck_assert_int_eq(rocemu_mr_dereg(fx.client, resp.handle), 0);
	ck_assert_int_eq(munmap(region, page), 0);
	fx_turn();
	ck_assert_uint_eq(mm()->gen, gen);
}
END_TEST

/* An MR still covers the range: its watch stays, and the unmap is reported. */
START_TEST(test_range_of_another_mr_stays_watched)
{
	const struct rocemu_reg_mr_req req = { .pdn = fx.pdn, .access = RW_ACCESS,
					       .addr = (uintptr_t)region, .length = 2 * page,
					       .iova = (uintptr_t)region };
	struct rocemu_reg_mr_resp resp;
	uint64_t gen;

	ck_assert_int_eq(rocemu_mr_reg(fx.client, &req, &resp), 0);
	gen = rocemu_mm_watch_range(mm(), (uintptr_t)(region + page), page);
	rocemu_mm_unwatch_range(mm(), (uintptr_t)(region + page), page);
	take_away(region + page, page, false);
	ck_assert_uint_eq(mm()->gen, gen + 1);
	ck_assert(!rocemu_mm_reachable(mm(), (uintptr_t)(region + page), page, gen));
}
END_TEST

static Suite *mm_watch_suite(void)
{
	Suite *s = suite_create("mm_watch");
	TCase *tc = tcase_create("mm_watch");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_take_only_userfaultfd);
	tcase_add_test(tc, test_unmap_ends_older_generation);
	tcase_add_test(tc, test_mr_stops_reaching_unmapped_page);
	tcase_add_test(tc, test_dontneed_reported);
	tcase_add_test(tc, test_unwatchable_follows);
	tcase_add_test(tc, test_unwatched_range_not_reported);
	tcase_add_test(tc, test_dereg_unwatches);
	tcase_add_test(tc, test_range_of_another_mr_stays_watched);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	int uffd = uffd_open();

	if (uffd < 0) {
		/* seccomp, an old kernel, or a policy against it: nothing to watch with. */
		fprintf(stderr, "no userfaultfd here (%s): skipped\n", strerror(errno));
		return 77;
	}
	close(uffd);
	return fx_suite_run(mm_watch_suite());
}
