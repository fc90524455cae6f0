/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The doorbell scan (emulator/sched/idle.c) and the direct doorbells of
 * mlx5dv_init_obj's objects (emulator/sched/direct.c) on the fixture's
 * loop: the scan looks at a context only when its doorbell_seq moved,
 * sends in RTS and flushes in ERR what it finds, serves the doorbells rung
 * before a control request first; a context's page starts asleep and asks
 * for receive kicks while a QP is in ERR; a watched QP's doorbell record
 * is found without doorbell_seq, a watched CQ's arm word handed over, and
 * a CQ arm found either way owes its event, and the poll period starts
 * short after work and backs off while nothing rings; a userfaultfd that
 * comes with a watch is taken only when it is one, over whole pages within
 * the bound, and once the daemon is cold the doorbell page it protects
 * wakes the loop when the program writes it.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <unistd.h>

#include "emulator/ctrl/client_life.h"
#include "emulator/obj/cq.h"
#include "emulator/obj/qp.h"
#include "emulator/sched/direct.h"
#include "emulator/sched/idle.h"
#include "tests/unit/fixture.h"

static uint16_t post_inline_send(void)
{
	static const char text[] = "ring";
	const struct fx_wr wr = { .opcode = MLX5_OPCODE_SEND, .flags = MLX5_WQE_CTRL_CQ_UPDATE,
				  .inline_data = text, .inline_len = sizeof(text) - 1 };

	return fx_post_send(&wr);
}

/* The send doorbell record written as a program of its own rings it: no doorbell_seq, no kick. */
static void ring_send_dbrec_only(void)
{
	__be32 *dbrec = (__be32 *)(fx.qp.map + fx.qp.layout.dbrec_offset);

	__atomic_store_n(&dbrec[MLX5_SND_DBR], htobe32(fx.qp.sq_cur & 0xffff), __ATOMIC_RELEASE);
}

static void bump_doorbell_seq(void)
{
	__atomic_add_fetch(&fx.page->doorbell_seq, 1, __ATOMIC_RELEASE);
}

static int watch(uint32_t kind, uint32_t handle)
{
	const struct rocemu_direct_doorbells_req req = { .kind = kind, .handle = handle };

	return rocemu_direct_watch(fx.client, &req);
}

/*
 * A userfaultfd of this process registered for write protection over the
 * page of fx.qp's doorbell record in fx.qp.map (the program's mapping, not
 * the daemon's), that page in *req; -1 where the kernel gives none.
 */
static int doorbell_uffd(struct rocemu_direct_doorbells_req *req)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t start = (uintptr_t)(fx.qp.map + fx.qp.layout.dbrec_offset) & ~(page - 1);
	struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_WP_HUGETLBFS_SHMEM };
	struct uffdio_register reg = { .range = { start, page }, .mode = UFFDIO_REGISTER_MODE_WP };
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);

	if (fd >= 0 && (ioctl(fd, UFFDIO_API, &api) || ioctl(fd, UFFDIO_REGISTER, &reg))) {
		close(fd);
		fd = -1;
	}
	req->wp_addr = start;
	req->wp_len = page;
	return fd;
}

/* fx.qp again in RTS, its send CQ a new one on a completion channel (its read end, non-blocking). */
static int send_cq_on_channel(void)
{
	struct fx_cq old = fx.scq;
	int ch;

	fx_cq_create(&fx.scq, &ch);
	ck_assert_int_eq(fcntl(ch, F_SETFL, O_NONBLOCK), 0);
	fx_qp_replace(IBV_QPT_RC);
	fx_qp_reset_to_rts();
	munmap(old.map, old.layout.size);
	return ch;
}

/* A SEND acknowledged: its CQE in the send CQ, not polled. */
static void send_completed(void)
{
	post_inline_send();
	fx_doorbell();
	fx_rx_ack(FX_SQ_PSN, 0, 1);
	fx_turn();
}

/* The arm word as mlx5_arm_cq writes it: sequence sn, any CQE, consumer index 0. */
static void arm_send_cq(uint32_t sn)
{
	__be32 *dbrec = (__be32 *)(fx.scq.map + fx.scq.layout.dbrec_offset);

	__atomic_store_n(&dbrec[ROCEMU_CQ_DBR_ARM], htobe32(sn << 28 | MLX5_CQ_DB_REQ_NOT),
			 __ATOMIC_RELEASE);
}

static bool channel_event(int ch)
{
	uint64_t user_cq;
	ssize_t n = read(ch, &user_cq, sizeof(user_cq));

	ck_assert(n == -1 || (n == sizeof(user_cq) && user_cq == FX_USER_CQ));
	return n == sizeof(user_cq);
}

/* ---- idle.c ---- */

START_TEST(test_scan_needs_doorbell_seq)
{
	post_inline_send();
	ring_send_dbrec_only();
	fx_turn();
	fx_run(0);
	/* The record alone is not looked at: the shim's doorbell_seq says which contexts to scan. */
	ck_assert_uint_eq(fx.nwire, 0);
	bump_doorbell_seq();
	fx_turn();
	ck_assert_uint_eq(fx.nwire, 1);
	fx_wire_expect(0, ROCEMU_OP_RC_SEND_ONLY, FX_SQ_PSN, true, 4);
	ck_assert_uint_eq(fx.client->doorbell_seq_seen, fx.page->doorbell_seq);
	/* Seen once: a scan with nothing new sends nothing again. */
	fx_turn();
	ck_assert_uint_eq(fx.nwire, 1);
}
END_TEST

/* A WQE posted, then the QP moved to ERR by the next request: it leaves before the flush. */
START_TEST(test_doorbell_before_request)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	uint16_t wqe;

	wqe = post_inline_send();
	ring_send_dbrec_only();
	bump_doorbell_seq();
	rocemu_idle_before_request(fx.client);
	ck_assert_uint_eq(fx.nwire, 1);
	fx_wire_expect(0, ROCEMU_OP_RC_SEND_ONLY, FX_SQ_PSN, true, 4);
	ck_assert_int_eq(fx_qp_modify(&attr, IBV_QP_STATE), 0);
	fx_turn();
	fx_expect_cqe(&fx.scq, MLX5_CQE_REQ_ERR, wqe, MLX5_CQE_SYNDROME_WR_FLUSH_ERR);
	/* Nothing rung: the request is served without a scan's work. */
	rocemu_idle_before_request(fx.client);
	ck_assert_uint_eq(fx.nwire, 1);
}
END_TEST

/* In ERR the scan flushes what is posted: a CQE with WR_FLUSH_ERR, nothing on the wire. */
START_TEST(test_scan_flushes_in_err)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	struct mlx5_cqe64 cqe;
	uint16_t first, second;

	ck_assert_int_eq(fx_qp_modify(&attr, IBV_QP_STATE), 0);
	fx_turn();
	ck_assert(!fx_poll(&fx.scq, &cqe));
	first = post_inline_send();
	second = post_inline_send();
	fx_doorbell();
	ck_assert_uint_eq(fx.nwire, 0);
	fx_expect_cqe(&fx.scq, MLX5_CQE_REQ_ERR, first, MLX5_CQE_SYNDROME_WR_FLUSH_ERR);
	fx_expect_cqe(&fx.scq, MLX5_CQE_REQ_ERR, second, MLX5_CQE_SYNDROME_WR_FLUSH_ERR);
	ck_assert(!fx_poll(&fx.scq, &cqe));
}
END_TEST

/* A new context's page: asleep (the shim kicks), receive kicks asked only while a QP is in ERR. */
START_TEST(test_new_page)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	struct rocemu_client *c;

	ck_assert_uint_eq(fx.page->daemon_sleeping, 1);
	ck_assert_uint_eq(fx.page->recv_kick, 0);
	ck_assert_int_eq(fx_qp_modify(&attr, IBV_QP_STATE), 0);
	ck_assert_uint_eq(fx.emu.qps_in_error, 1);
	c = fx_client_new();
	ck_assert_uint_eq(rocemu_client_page(c)->daemon_sleeping, 1);
	ck_assert_uint_eq(rocemu_client_page(c)->recv_kick, 1);
}
END_TEST

/* An arm of a CQ holding an unreported CQE owes an event at once: the scan finds the arm by doorbell_seq. */
START_TEST(test_scan_finds_cq_arm)
{
	int ch = send_cq_on_channel();

	send_completed();
	ck_assert(!channel_event(ch));
	arm_send_cq(1);
	fx_turn();
	ck_assert(!channel_event(ch));
	bump_doorbell_seq();
	fx_turn();
	ck_assert(channel_event(ch));
	close(ch);
}
END_TEST

/* ---- direct.c ---- */

START_TEST(test_watch_refused)
{
	ck_assert_int_eq(watch(ROCEMU_DIRECT_QP, fx.qp.qpn + 1), -EINVAL);
	ck_assert_int_eq(watch(ROCEMU_DIRECT_CQ, 0xfffff0), -EINVAL);
	ck_assert_int_eq(watch(ROCEMU_DIRECT_CQ + 1, fx.scq.cqn), -EINVAL);
	/* Another context's QP is none of this one's. */
	ck_assert_int_eq(rocemu_direct_watch(fx_client_new(), &(struct rocemu_direct_doorbells_req){
		.kind = ROCEMU_DIRECT_QP, .handle = fx.qp.qpn }), -EINVAL);
	ck_assert_uint_eq(fx.emu.direct_objs, 0);
}
END_TEST

START_TEST(test_watch_counts_once)
{
	ck_assert_int_eq(watch(ROCEMU_DIRECT_QP, fx.qp.qpn), 0);
	ck_assert_int_eq(watch(ROCEMU_DIRECT_QP, fx.qp.qpn), 0);
	ck_assert_uint_eq(fx.client->direct_objs, 1);
	ck_assert_uint_eq(fx.emu.direct_objs, 1);
	ck_assert_uint_eq(fx.emu.direct_poll_ns, ROCEMU_DIRECT_POLL_MIN_NS);
	ck_assert_int_eq(watch(ROCEMU_DIRECT_CQ, fx.scq.cqn), 0);
	ck_assert_int_eq(watch(ROCEMU_DIRECT_CQ, fx.scq.cqn), 0);
	ck_assert_uint_eq(fx.client->direct_objs, 2);
	ck_assert_uint_eq(fx.emu.direct_objs, 2);
	/* A destroyed QP is watched no more. */
	fx_qp_replace(IBV_QPT_RC);
	ck_assert_uint_eq(fx.emu.direct_objs, 1);
}
END_TEST

/* A watched QP's doorbell record is found by comparing it: no doorbell_seq, no kick. */
START_TEST(test_watched_qp_rings)
{
	ck_assert_int_eq(watch(ROCEMU_DIRECT_QP, fx.qp.qpn), 0);
	fx_turn();
	post_inline_send();
	ring_send_dbrec_only();
	fx_turn();
	ck_assert_uint_eq(fx.nwire, 1);
	fx_wire_expect(0, ROCEMU_OP_RC_SEND_ONLY, FX_SQ_PSN, true, 4);
	post_inline_send();
	ring_send_dbrec_only();
	fx_turn();
	ck_assert_uint_eq(fx.nwire, 2);
	fx_wire_expect(1, ROCEMU_OP_RC_SEND_ONLY, FX_SQ_PSN + 1, true, 4);
}
END_TEST

/*
 * The arm sequence of a CQ never armed is handed over as fired at 3, so
 * that a program's first arm (sequence 0, as mlx5 starts) is new; a CQ
 * armed already keeps its word.
 */
START_TEST(test_cq_arm_handover)
{
	__be32 *scq_dbrec = (__be32 *)(fx.scq.map + fx.scq.layout.dbrec_offset);
	__be32 *rcq_dbrec = (__be32 *)(fx.rcq.map + fx.rcq.layout.dbrec_offset);
	const __be32 armed = htobe32(1u << 28);

	ck_assert_uint_eq(scq_dbrec[ROCEMU_CQ_DBR_ARM], 0);
	ck_assert_int_eq(watch(ROCEMU_DIRECT_CQ, fx.scq.cqn), 0);
	ck_assert_uint_eq(be32toh(scq_dbrec[ROCEMU_CQ_DBR_ARM]), 3u << 28);
	ck_assert_uint_eq(fx_emu_cq(&fx.scq)->fired_sn, 3);
	/* Watching it again hands nothing over again. */
	scq_dbrec[ROCEMU_CQ_DBR_ARM] = 0;
	ck_assert_int_eq(watch(ROCEMU_DIRECT_CQ, fx.scq.cqn), 0);
	ck_assert_uint_eq(scq_dbrec[ROCEMU_CQ_DBR_ARM], 0);
	rcq_dbrec[ROCEMU_CQ_DBR_ARM] = armed;
	ck_assert_int_eq(watch(ROCEMU_DIRECT_CQ, fx.rcq.cqn), 0);
	ck_assert_uint_eq(rcq_dbrec[ROCEMU_CQ_DBR_ARM], armed);
}
END_TEST

/* A program arming a watched CQ itself, from sequence 0: the arm is found without doorbell_seq. */
START_TEST(test_watched_cq_arm)
{
	int ch = send_cq_on_channel();

	ck_assert_int_eq(watch(ROCEMU_DIRECT_CQ, fx.scq.cqn), 0);
	send_completed();
	ck_assert(!channel_event(ch));
	arm_send_cq(0);
	fx_turn();
	ck_assert(channel_event(ch));
	close(ch);
}
END_TEST

/* The poll timer exists only while something is watched, at the period work set. */
START_TEST(test_poll_timer)
{
	uint64_t before, timer;

	rocemu_direct_sleep(&fx.emu);
	ck_assert_uint_eq(fx.emu.direct_timer, 0);
	ck_assert_int_eq(watch(ROCEMU_DIRECT_QP, fx.qp.qpn), 0);
	before = rocemu_now_ns();
	rocemu_direct_sleep(&fx.emu);
	timer = fx.emu.direct_timer;
	ck_assert_uint_ne(timer, 0);
	ck_assert_uint_ge(fx.emu.direct_deadline, before + ROCEMU_DIRECT_POLL_MIN_NS);
	ck_assert_uint_le(fx.emu.direct_deadline, rocemu_now_ns() + ROCEMU_DIRECT_POLL_MIN_NS);
	/* Asleep again before it fired: the poll already armed, sooner, stands. */
	rocemu_direct_sleep(&fx.emu);
	ck_assert_uint_eq(fx.emu.direct_timer, timer);
}
END_TEST

/*
 * Nothing rings for a while: the period doubles at each poll once the
 * last work is ROCEMU_DIRECT_HOT_NS old; a doorbell found brings it back
 * to the shortest. Sampled between runs of the loop, the longest period
 * seen counts: a run's last turn may see the poll due as it stops, which
 * the idle hook takes for work.
 */
START_TEST(test_poll_backs_off_and_resets)
{
	uint64_t longest = 0;

	ck_assert_int_eq(watch(ROCEMU_DIRECT_QP, fx.qp.qpn), 0);
	for (unsigned int i = 0; i < 12; i++) {
		fx_run(ROCEMU_DIRECT_HOT_NS / 2);
		ck_assert_uint_le(fx.emu.direct_poll_ns, ROCEMU_DIRECT_POLL_MAX_NS);
		if (fx.emu.direct_poll_ns > longest)
			longest = fx.emu.direct_poll_ns;
	}
	ck_assert_uint_gt(longest, ROCEMU_DIRECT_POLL_MIN_NS);
	ck_assert_uint_eq(fx.nwire, 0);
	post_inline_send();
	ring_send_dbrec_only();
	fx_turn();
	ck_assert_uint_eq(fx.nwire, 1);
	ck_assert_uint_eq(fx.emu.direct_poll_ns, ROCEMU_DIRECT_POLL_MIN_NS);
}
END_TEST

/*
 * What comes with a watch is the client's word: a descriptor that is no
 * userfaultfd, a range not of whole pages, or one past the bound, is not
 * taken (the request's descriptor stays the server's to close) and the
 * object stays polled, also once the daemon is cold.
 */
START_TEST(test_watch_forged_uffd)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	struct rocemu_direct_doorbells_req req = { .kind = ROCEMU_DIRECT_QP, .handle = fx.qp.qpn };
	int pipe_fds[2], uffd;

	ck_assert_int_eq(pipe(pipe_fds), 0);
	uffd = doorbell_uffd(&req);
	fx.client->req_fd = pipe_fds[0];
	ck_assert_int_eq(rocemu_direct_watch(fx.client, &req), 0);
	ck_assert_int_eq(fx.client->req_fd, pipe_fds[0]);
	ck_assert(!fx_emu_qp()->direct.has_uffd);
	if (uffd >= 0) {
		req = (struct rocemu_direct_doorbells_req){ .kind = ROCEMU_DIRECT_CQ,
							    .handle = fx.scq.cqn,
							    .wp_addr = req.wp_addr + 8,
							    .wp_len = page };
		fx.client->req_fd = uffd;
		ck_assert_int_eq(rocemu_direct_watch(fx.client, &req), 0);
		ck_assert_int_eq(fx.client->req_fd, uffd);
		ck_assert(!fx_emu_cq(&fx.scq)->direct.has_uffd);
		req = (struct rocemu_direct_doorbells_req){ .kind = ROCEMU_DIRECT_CQ,
							    .handle = fx.rcq.cqn,
							    .wp_addr = req.wp_addr - 8,
							    .wp_len = ROCEMU_DIRECT_WP_MAX + page };
		ck_assert_int_eq(rocemu_direct_watch(fx.client, &req), 0);
		ck_assert_int_eq(fx.client->req_fd, uffd);
		ck_assert(!fx_emu_cq(&fx.rcq)->direct.has_uffd);
		close(uffd);
	}
	fx.client->req_fd = -1;
	fx_run(2 * ROCEMU_DIRECT_HOT_NS);
	ck_assert_uint_eq(fx.emu.direct_polled, fx.emu.direct_objs);
	ck_assert_uint_ge(fx.emu.direct_polled, 1);
	close(pipe_fds[0]);
	close(pipe_fds[1]);
}
END_TEST

static void *ring_in_thread(void *done)
{
	ring_send_dbrec_only();
	__atomic_store_n((bool *)done, true, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * A watch with the program's userfaultfd: once the daemon is cold the
 * doorbell page is write-protected and no poll timer runs; the program's
 * doorbell write (its own thread, which the fault stops) wakes the loop,
 * the protection is lifted, the write lands and the SEND leaves, one
 * wake-up counted. Where the kernel gives no userfaultfd the QP stays
 * polled, and its doorbell is found all the same.
 */
START_TEST(test_protected_doorbell_wakes)
{
	struct rocemu_direct_doorbells_req req = { .kind = ROCEMU_DIRECT_QP, .handle = fx.qp.qpn };
	struct rocemu_qp *qp;
	bool done = false;
	pthread_t writer;
	int uffd = doorbell_uffd(&req);

	if (uffd < 0)
		req.wp_len = 0;
	fx.client->req_fd = uffd;
	ck_assert_int_eq(rocemu_direct_watch(fx.client, &req), 0);
	qp = fx_emu_qp();
	ck_assert(qp->direct.has_uffd == (uffd >= 0));
	if (uffd >= 0)
		ck_assert_int_eq(fx.client->req_fd, -1);
	fx_run(2 * ROCEMU_DIRECT_HOT_NS);
	ck_assert(qp->direct.armed == (uffd >= 0));
	ck_assert_uint_eq(fx.emu.direct_polled, uffd >= 0 ? 0 : 1);
	post_inline_send();
	ck_assert_int_eq(pthread_create(&writer, NULL, ring_in_thread, &done), 0);
	for (int i = 0; i < 100 && !(__atomic_load_n(&done, __ATOMIC_ACQUIRE) && fx.nwire); i++)
		fx_run(ROCEMU_DIRECT_POLL_MIN_NS * 4);
	ck_assert_int_eq(pthread_join(writer, NULL), 0);
	ck_assert_uint_eq(fx.nwire, 1);
	fx_wire_expect(0, ROCEMU_OP_RC_SEND_ONLY, FX_SQ_PSN, true, 4);
	ck_assert_uint_eq(fx.client->dev->direct_wakeups, uffd >= 0 ? 1 : 0);
	ck_assert(!qp->direct.armed);
}
END_TEST

static Suite *sched_suite(void)
{
	Suite *s = suite_create("sched");
	TCase *idle = tcase_create("idle");
	TCase *direct = tcase_create("direct");

	tcase_add_checked_fixture(idle, fx_setup, fx_teardown);
	tcase_add_test(idle, test_scan_needs_doorbell_seq);
	tcase_add_test(idle, test_doorbell_before_request);
	tcase_add_test(idle, test_scan_flushes_in_err);
	tcase_add_test(idle, test_new_page);
	tcase_add_test(idle, test_scan_finds_cq_arm);
	suite_add_tcase(s, idle);
	tcase_add_checked_fixture(direct, fx_setup, fx_teardown);
	tcase_add_test(direct, test_watch_refused);
	tcase_add_test(direct, test_watch_counts_once);
	tcase_add_test(direct, test_watched_qp_rings);
	tcase_add_test(direct, test_cq_arm_handover);
	tcase_add_test(direct, test_watched_cq_arm);
	tcase_add_test(direct, test_poll_timer);
	tcase_add_test(direct, test_poll_backs_off_and_resets);
	tcase_add_test(direct, test_watch_forged_uffd);
	tcase_add_test(direct, test_protected_doorbell_wakes);
	suite_add_tcase(s, direct);
	return s;
}

int main(void)
{
	return fx_suite_run(sched_suite());
}
