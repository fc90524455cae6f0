/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Completion timestamps: the device clock in ibv_query_device_ex,
 * ibv_query_rt_values_ex and mlx5dv_get_clock_info, and the timestamps of
 * SEND and RECV completions on CQs of ibv_create_cq_ex and mlx5dv_create_cq
 * (64- and 128-byte CQEs). Raw timestamps are in device cycles and never go
 * back; converted (ibv_wc_read_completion_wallclock_ns, mlx5dv_ts_to_ns)
 * they fall inside the wall-clock interval around each operation. Figures
 * are printed, never compared with elapsed time.
 *
 *   mlx5dv_timestamps DEVICE_A DEVICE_B
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <infiniband/mlx5dv.h>

#include "tests/e2e/harness/verbs_pair.h"

#define MESSAGES 20
#define MSG_LEN 64
#define TS_FLAGS (IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)

/* One completion as the extended CQ reports it. */
struct stamped {
	enum ibv_wc_status status;
	uint64_t wr_id, raw, wall_ns;
};

static uint64_t wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The device clock as the verbs and mlx5dv queries state it. */
static void device_clock(struct ibv_context *ctx)
{
	struct ibv_device_attr_ex attr;
	struct ibv_values_ex v1 = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };
	struct ibv_values_ex v2 = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };
	struct ibv_values_ex bad = { .comp_mask = 1u << 5 };
	struct mlx5dv_context dv = { .comp_mask = MLX5DV_CONTEXT_MASK_CLOCK_INFO_UPDATE |
						  MLX5DV_CONTEXT_MASK_HCA_CORE_CLOCK };
	struct mlx5dv_clock_info info;
	uint64_t before, after, ns;
	int ret;

	ret = ibv_query_device_ex(ctx, NULL, &attr);
	check(ret == 0 && attr.completion_timestamp_mask && attr.hca_core_clock,
	      "ibv_query_device_ex: completion_timestamp_mask 0x%" PRIx64 ", hca_core_clock %" PRIu64
	      " kHz", attr.completion_timestamp_mask, attr.hca_core_clock);
	ret = ibv_query_rt_values_ex(ctx, &v1);
	check(ret == 0 && v1.raw_clock.tv_sec == 0 && v1.raw_clock.tv_nsec > 0,
	      "ibv_query_rt_values_ex: raw clock %ld cycles", v1.raw_clock.tv_nsec);
	before = wall_now();
	ret = ibv_query_rt_values_ex(ctx, &v2) ? -1 : mlx5dv_get_clock_info(ctx, &info);
	after = wall_now();
	check(ret == 0 && v2.raw_clock.tv_nsec >= v1.raw_clock.tv_nsec,
	      "ibv_query_rt_values_ex: the clock never goes back (%ld, then %ld)",
	      v1.raw_clock.tv_nsec, v2.raw_clock.tv_nsec);
	check(ibv_query_rt_values_ex(ctx, &bad) == EINVAL, "ibv_query_rt_values_ex: unknown mask: EINVAL");
	if (ret)
		return;
	ns = mlx5dv_ts_to_ns(&info, (uint64_t)v2.raw_clock.tv_nsec);
	/* Read just after `before`: a cycle (6.4 ns) and the clock offset's estimate may be lost. */
	check(info.mult && info.mask && ns >= before - 1000 && ns <= after,
	      "mlx5dv_ts_to_ns(raw clock) %" PRIu64 " in [%" PRIu64 ", %" PRIu64 "] "
	      "(mult %u shift %u mask 0x%" PRIx64 ")", ns, before, after, info.mult, info.shift,
	      info.mask);
	ret = mlx5dv_query_device(ctx, &dv);
	check(ret == 0 && dv.comp_mask == MLX5DV_CONTEXT_MASK_CLOCK_INFO_UPDATE &&
		      dv.max_clock_info_update_nsec > 1000000000ull,
	      "mlx5dv_query_device: clock info update at least every %" PRIu64
	      " ns, no mapped core clock (comp_mask 0x%" PRIx64 ")",
	      dv.max_clock_info_update_nsec, dv.comp_mask);
}

/* Poll one completion of cq (at most completion_wait_ms). */
static bool poll_stamped(struct ibv_cq_ex *cq, struct stamped *out)
{
	struct ibv_poll_cq_attr attr = { 0 };
	struct timespec start;
	int ret;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while ((ret = ibv_start_poll(cq, &attr)) == ENOENT)
		if (elapsed_ms(&start) > completion_wait_ms)
			return false;
	if (ret)
		return false;
	out->status = cq->status;
	out->wr_id = cq->wr_id;
	out->raw = ibv_wc_read_completion_ts(cq);
	out->wall_ns = ibv_wc_read_completion_wallclock_ns(cq);
	ibv_end_poll(cq);
	return true;
}

static struct ibv_cq_ex *cq_ex_create(struct dev *d, uint16_t dv_cqe_size)
{
	struct ibv_cq_init_attr_ex attr = { .cqe = 32, .wc_flags = IBV_WC_STANDARD_FLAGS | TS_FLAGS };
	struct mlx5dv_cq_init_attr dv = { .comp_mask = MLX5DV_CQ_INIT_ATTR_MASK_CQE_SIZE,
					  .cqe_size = dv_cqe_size };
	struct ibv_cq_ex *cq = dv_cqe_size ? mlx5dv_create_cq(d->ctx, &attr, &dv)
					   : ibv_create_cq_ex(d->ctx, &attr);

	check(cq != NULL, "%s: %s with completion timestamps%s: %s", d->name,
	      dv_cqe_size ? "mlx5dv_create_cq" : "ibv_create_cq_ex",
	      dv_cqe_size == 128 ? " (128-byte CQEs)" : "", cq ? "a CQ" : strerror(errno));
	return cq;
}

/* ts in [lo, hi]: a timestamp converted to ns lies inside the interval around its operation. */
static bool within(uint64_t ts, uint64_t lo, uint64_t hi)
{
	return ts >= lo && ts <= hi;
}

/* SENDs from a to b: each receive is stamped no earlier than the send before it, no later than its own. */
static void send_recv(struct ibv_qp *qa, struct ibv_cq_ex *a_send, struct ibv_qp *qb,
		      struct ibv_cq_ex *b_recv, struct buf *src, struct buf *dst)
{
	struct stamped s = { 0 }, r = { 0 };
	uint64_t prev_send = 0, prev_recv = 0, first_send = 0, before, after, first_ns, last_ns;
	unsigned int i, in_interval = 0, ordered = 0;
	struct mlx5dv_clock_info info;

	for (i = 0; i < MESSAGES; i++) {
		struct ibv_sge rs = sge_of(dst, 0, MSG_LEN), ss = sge_of(src, 0, MSG_LEN);
		struct ibv_recv_wr rwr = { .wr_id = 100 + i, .sg_list = &rs, .num_sge = 1 };
		struct ibv_send_wr swr = { .wr_id = i, .sg_list = &ss, .num_sge = 1,
					   .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };

		if (!post_recv(qb, &rwr, "receive"))
			return;
		before = wall_now();
		if (!post_send(qa, &swr, "SEND"))
			return;
		if (!poll_stamped(b_recv, &r) || !poll_stamped(a_send, &s)) {
			check(false, "message %u: both completions", i);
			return;
		}
		after = wall_now();
		if (r.status != IBV_WC_SUCCESS || s.status != IBV_WC_SUCCESS || r.wr_id != 100 + i ||
		    s.wr_id != i) {
			check(false, "message %u: completions %s/%s", i, ibv_wc_status_str(r.status),
			      ibv_wc_status_str(s.status));
			return;
		}
		/* The receive is written before its ACK leaves, so before the send completes. */
		ordered += prev_send <= r.raw && prev_recv <= r.raw && r.raw <= s.raw;
		in_interval += within(r.wall_ns, before, after) && within(s.wall_ns, before, after);
		if (i == 0 || i == MESSAGES - 1)
			printf("message %u: recv %" PRIu64 " cycles = %" PRIu64 " ns, send %" PRIu64
			       " cycles = %" PRIu64 " ns, wall clock [%" PRIu64 ", %" PRIu64 "]\n",
			       i, r.raw, r.wall_ns, s.raw, s.wall_ns, before, after);
		if (!i)
			first_send = s.raw;
		prev_send = s.raw;
		prev_recv = r.raw;
	}
	check(ordered == MESSAGES, "%u SENDs: receive and send timestamps in order (%u of %u)",
	      MESSAGES, ordered, MESSAGES);
	check(in_interval == MESSAGES,
	      "%u SENDs: wall-clock ns of each completion within its operation (%u of %u)", MESSAGES,
	      in_interval, MESSAGES);
	if (mlx5dv_get_clock_info(qa->context, &info)) {
		check(false, "mlx5dv_get_clock_info");
		return;
	}
	first_ns = mlx5dv_ts_to_ns(&info, first_send);
	last_ns = mlx5dv_ts_to_ns(&info, s.raw);
	check(first_ns <= last_ns && last_ns <= wall_now(),
	      "mlx5dv_ts_to_ns of the first and last send: %" PRIu64 " <= %" PRIu64 " ns", first_ns,
	      last_ns);
}

/* b's receive CQ of CQEs of cqe_size bytes (0: ibv_create_cq_ex); a's send CQ by ibv_create_cq_ex. */
static void stamped_pair(uint16_t cqe_size)
{
	struct ibv_qp_cap cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1,
				  .max_recv_sge = 1 };
	struct ibv_cq_ex *a_cq = cq_ex_create(&dev_a, 0), *b_cq = cq_ex_create(&dev_b, cqe_size);
	struct ibv_qp *qa = NULL, *qb = NULL;
	struct buf *src = buf_new(&dev_a, MSG_LEN, MSG_LEN, IBV_ACCESS_LOCAL_WRITE, 1);
	struct buf *dst = buf_new(&dev_b, MSG_LEN, MSG_LEN, IBV_ACCESS_LOCAL_WRITE, 0);
	int ret;

	if (a_cq && b_cq) {
		qa = qp_create(&dev_a, ibv_cq_ex_to_cq(a_cq), ibv_cq_ex_to_cq(a_cq), false, &cap);
		qb = qp_create(&dev_b, ibv_cq_ex_to_cq(b_cq), ibv_cq_ex_to_cq(b_cq), false, &cap);
	}
	if (qa && qb && src && dst) {
		ret = qp_connect(qa, qb->qp_num, &dev_b.gid, PSN_A, PSN_B, &side_default.knobs);
		if (!ret)
			ret = qp_connect(qb, qa->qp_num, &dev_a.gid, PSN_B, PSN_A,
					 &side_default.knobs);
		check(ret == 0, "connecting the QPs: %s", strerror(ret));
		if (!ret)
			send_recv(qa, a_cq, qb, b_cq, src, dst);
	}
	if (qa)
		ibv_destroy_qp(qa);
	if (qb)
		ibv_destroy_qp(qb);
	if (a_cq)
		ibv_destroy_cq(ibv_cq_ex_to_cq(a_cq));
	if (b_cq)
		ibv_destroy_cq(ibv_cq_ex_to_cq(b_cq));
	bufs_free();
}

static void clock_queries(void)
{
	device_clock(dev_a.ctx);
}

static void cq_ex_stamps(void)
{
	stamped_pair(0);
}

static void dv_cq_stamps(void)
{
	stamped_pair(64);
}

static void dv_cq128_stamps(void)
{
	stamped_pair(128);
}

static const struct named_check checks[] = {
	{ "device clock", clock_queries },
	{ "ibv_create_cq_ex timestamps", cq_ex_stamps },
	{ "mlx5dv_create_cq timestamps", dv_cq_stamps },
	{ "mlx5dv_create_cq 128-byte CQE timestamps", dv_cq128_stamps },
};

int main(int argc, char **argv)
{
	return run_checks_main(argc, argv, checks, sizeof(checks) / sizeof(checks[0]));
}
