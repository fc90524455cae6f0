/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The harness of the e2e verbs programs (see verbs_pair.h): devices,
 * registered buffers, a connected RC QP pair, posting, completions and
 * the check lines, all through the public verbs API.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "verbs_pair.h"

#define MAX_MISSING 2		/* after that many the data path is stuck: stop waiting */
#define MAX_BUFS 16		/* buffers one check may hold */

/* Every send op any check uses: one kind of ibv_qp_ex QP serves them all. */
#define ALL_SEND_OPS (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | \
		      IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | \
		      IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | \
		      IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_LOCAL_INV | \
		      IBV_QP_EX_WITH_SEND_WITH_INV | IBV_QP_EX_WITH_BIND_MW)

const struct side_spec side_default = {
	.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 4, .max_recv_sge = 4 },
	.send_cqe = CQ_DEPTH, .recv_cqe = CQ_DEPTH, .knobs = QP_KNOBS_DEFAULT,
};

struct dev dev_a, dev_b;
unsigned int completion_wait_ms = 5000;
static struct buf bufs[MAX_BUFS];
static int nbufs, passed, failed, missing;

void check(bool ok, const char *fmt, ...)
{
	va_list ap;

	fputs(ok ? "ok: " : "FAIL: ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);	/* out even if a timeout or a kill ends us next */
	if (ok)
		passed++;
	else
		failed++;
}

/* "N passed", "N failed"; the exit status: 0 when some passed and none failed. */
int checks_finish(void)
{
	printf("%d passed\n%d failed\n", passed, failed);
	return failed || !passed ? 1 : 0;
}

int run_checks(const char *name_a, const char *name_b, const struct named_check *checks, size_t n)
{
	if (dev_open(&dev_a, name_a) && dev_open(&dev_b, name_b)) {
		printf("requester on %s, responder on %s\n", name_a, name_b);
		for (size_t i = 0; i < n; i++) {
			printf("== %s\n", checks[i].name);
			checks[i].run();
		}
	}
	dev_close(&dev_b);
	dev_close(&dev_a);
	return checks_finish();
}

int run_checks_main(int argc, char **argv, const struct named_check *checks, size_t n)
{
	setvbuf(stdout, NULL, _IOLBF, 0);	/* lines in order even if a timeout kills us */
	if (argc != 3) {
		fprintf(stderr, "usage: %s DEVICE_A DEVICE_B\n", argv[0]);
		return 1;
	}
	return run_checks(argv[1], argv[2], checks, n);
}

/* ---- data patterns ---- */

uint8_t pattern_byte(unsigned int seed, size_t i)
{
	return (uint8_t)(i * 131 + (i >> 8) + seed * 29 + 1);
}

/* Byte i of p is byte msg_offset + i of message seed. */
void fill_pattern(uint8_t *p, size_t len, unsigned int seed, size_t msg_offset)
{
	for (size_t i = 0; i < len; i++)
		p[i] = pattern_byte(seed, msg_offset + i);
}

/* The first i where p differs from message seed at msg_offset, or len. */
size_t pattern_mismatch(const uint8_t *p, size_t len, unsigned int seed, size_t msg_offset)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != pattern_byte(seed, msg_offset + i))
			return i;
	return len;
}

bool all_bytes(const uint8_t *p, size_t len, uint8_t value)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != value)
			return false;
	return true;
}

void check_pattern(const uint8_t *p, size_t len, unsigned int seed, size_t msg_offset, const char *what)
{
	size_t bad = pattern_mismatch(p, len, seed, msg_offset);

	if (bad == len)
		check(true, "%s: %zu bytes right", what, len);
	else
		check(false, "%s: byte %zu is 0x%02x, want 0x%02x", what, bad, p[bad],
		      pattern_byte(seed, msg_offset + bad));
}

void check_untouched(const uint8_t *p, size_t len, uint8_t fill, const char *what)
{
	check(all_bytes(p, len, fill), "%s: %zu bytes untouched", what, len);
}

/* ---- devices and buffers ---- */

bool dev_open(struct dev *d, const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	bool found;
	int i;

	d->name = name;
	if (!list) {
		check(false, "ibv_get_device_list: %s", strerror(errno));
		return false;
	}
	for (i = 0; list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			break;
	found = list[i] != NULL;
	d->ctx = found ? ibv_open_device(list[i]) : NULL;
	ibv_free_device_list(list);
	if (!d->ctx) {
		check(false, "open %s: %s", name, found ? strerror(errno) : "no such device");
		return false;
	}
	d->pd = ibv_alloc_pd(d->ctx);
	if (!d->pd || ibv_query_gid(d->ctx, 1, 0, &d->gid)) {
		check(false, "%s: PD and GID 0: %s", name, strerror(errno));
		return false;
	}
	return true;
}

void dev_close(struct dev *d)
{
	if (d->pd)
		ibv_dealloc_pd(d->pd);
	if (d->ctx)
		ibv_close_device(d->ctx);
	memset(d, 0, sizeof(*d));
}

/* A page-aligned buffer of len bytes set to fill, with an MR over its first mr_len bytes (none if 0). */
struct buf *buf_new(struct dev *d, size_t len, size_t mr_len, int access, uint8_t fill)
{
	struct buf *b;

	if (nbufs == MAX_BUFS) {
		check(false, "test bug: more than %d buffers", MAX_BUFS);
		return NULL;
	}
	b = &bufs[nbufs];
	b->len = len;
	b->p = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);
	b->mr = NULL;
	if (!b->p) {
		check(false, "allocating %zu bytes", len);
		return NULL;
	}
	nbufs++;
	memset(b->p, fill, len);
	if (mr_len) {
		b->mr = ibv_reg_mr(d->pd, b->p, mr_len, access);
		if (!b->mr) {
			check(false, "%s: ibv_reg_mr of %zu bytes: %s", d->name, mr_len, strerror(errno));
			return NULL;
		}
	}
	return b;
}

void bufs_free(void)
{
	while (nbufs > 0) {
		struct buf *b = &bufs[--nbufs];

		if (b->mr)
			ibv_dereg_mr(b->mr);
		free(b->p);
	}
}

struct ibv_sge sge_of(const struct buf *b, size_t offset, size_t len)
{
	return (struct ibv_sge){
		.addr = (uintptr_t)b->p + offset, .length = (uint32_t)len, .lkey = b->mr ? b->mr->lkey : 0,
	};
}

uint64_t raddr_of(const struct buf *b, size_t offset)
{
	return (uintptr_t)b->p + offset;
}

/* ---- QPs ---- */

/* An RC QP of d on these CQs asking for *cap, which then holds what was granted. */
struct ibv_qp *qp_create(struct dev *d, struct ibv_cq *send_cq, struct ibv_cq *recv_cq, bool qp_ex,
			 struct ibv_qp_cap *cap)
{
	struct ibv_qp *qp;

	if (qp_ex) {
		struct ibv_qp_init_attr_ex attr = {
			.qp_type = IBV_QPT_RC, .send_cq = send_cq, .recv_cq = recv_cq,
			.cap = *cap, .pd = d->pd,
			.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
			.send_ops_flags = ALL_SEND_OPS,
		};

		qp = ibv_create_qp_ex(d->ctx, &attr);
		*cap = attr.cap;
	} else {
		struct ibv_qp_init_attr attr = {
			.qp_type = IBV_QPT_RC, .send_cq = send_cq, .recv_cq = recv_cq, .cap = *cap,
		};

		qp = ibv_create_qp(d->pd, &attr);
		*cap = attr.cap;
	}
	if (!qp)
		check(false, "%s: create RC QP%s: %s", d->name, qp_ex ? " with send ops" : "",
		      strerror(errno));
	return qp;
}

bool side_open(struct side *s, struct dev *d, const struct side_spec *spec)
{
	memset(s, 0, sizeof(*s));
	s->dev = d;
	s->send_cq = ibv_create_cq(d->ctx, spec->send_cqe, NULL, spec->send_channel, 0);
	s->recv_cq = ibv_create_cq(d->ctx, spec->recv_cqe, NULL, spec->recv_channel, 0);
	if (!s->send_cq || !s->recv_cq) {
		check(false, "%s: ibv_create_cq: %s", d->name, strerror(errno));
		return false;
	}
	s->cap = spec->cap;
	s->qp_ex = spec->qp_ex;
	s->qp = qp_create(d, s->send_cq, s->recv_cq, spec->qp_ex, &s->cap);
	return s->qp != NULL;
}

void side_close(struct side *s)
{
	if (s->qp)
		ibv_destroy_qp(s->qp);
	if (s->send_cq)
		ibv_destroy_cq(s->send_cq);
	if (s->recv_cq)
		ibv_destroy_cq(s->recv_cq);
	memset(s, 0, sizeof(*s));
}

/* A UD QP RESET -> INIT -> RTR -> RTS with qkey, as ibv_ud_pingpong does; 0 or the errno value. */
int ud_to_rts(struct ibv_qp *qp, uint32_t qkey, uint32_t sq_psn)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
				    .qkey = qkey };

	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
		return errno ? errno : EINVAL;
	attr.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE))
		return errno ? errno : EINVAL;
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = sq_psn;
	return ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

/* RTR -> RTS sending from sq_psn; 0 or the errno value. */
int qp_to_rts(struct ibv_qp *qp, uint32_t sq_psn, const struct qp_knobs *k)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_RTS, .timeout = k->timeout, .retry_cnt = k->retry_cnt,
		.rnr_retry = k->rnr_retry, .sq_psn = sq_psn, .max_rd_atomic = k->max_rd_atomic,
	};

	return ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* RESET -> INIT -> RTR (-> RTS unless k->stop_at_rtr) towards remote_qpn; 0 or the errno value. */
int qp_connect(struct ibv_qp *qp, uint32_t remote_qpn, const union ibv_gid *remote_gid,
	       uint32_t sq_psn, uint32_t rq_psn, const struct qp_knobs *k)
{
	/* Every remote access: the MRs and rkeys are what the checks vary. */
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC,
	};
	int ret;

	ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			    IBV_QP_ACCESS_FLAGS);
	if (ret)
		return ret;
	attr = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTR, .path_mtu = k->path_mtu ? k->path_mtu : IBV_MTU_1024,
		.dest_qp_num = remote_qpn,
		.rq_psn = rq_psn, .max_dest_rd_atomic = k->max_dest_rd_atomic,
		.min_rnr_timer = k->min_rnr_timer,
		.ah_attr = {
			.is_global = 1, .port_num = 1,
			.grh = { .dgid = *remote_gid, .sgid_index = 0, .hop_limit = 64 },
		},
	};
	ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	if (ret || k->stop_at_rtr)
		return ret;
	return qp_to_rts(qp, sq_psn, k);
}

/* QP a on dev_a (as spec a asks) connected to QP b on dev_b (as spec b asks). */
bool pair_open(struct pair *p, const struct side_spec *a, const struct side_spec *b)
{
	int ret;

	memset(p, 0, sizeof(*p));
	if (!side_open(&p->a, &dev_a, a) || !side_open(&p->b, &dev_b, b))
		return false;
	ret = qp_connect(p->a.qp, p->b.qp->qp_num, &dev_b.gid, PSN_A, PSN_B, &a->knobs);
	if (!ret)
		ret = qp_connect(p->b.qp, p->a.qp->qp_num, &dev_a.gid, PSN_B, PSN_A, &b->knobs);
	if (ret)
		check(false, "connecting QP 0x%06x to QP 0x%06x: %s", p->a.qp->qp_num,
		      p->b.qp->qp_num, strerror(ret));
	return ret == 0;
}

void pair_close(struct pair *p)
{
	side_close(&p->a);
	side_close(&p->b);
}

/* The QP's state into *state (and *sq_draining if given); 0 or the errno value. */
int qp_state(struct ibv_qp *qp, enum ibv_qp_state *state, int *sq_draining)
{
	struct ibv_qp_attr attr = { 0 };
	struct ibv_qp_init_attr init;
	int ret = ibv_query_qp(qp, &attr, IBV_QP_STATE, &init);

	if (ret)
		return ret;
	*state = attr.qp_state;
	if (sq_draining)
		*sq_draining = attr.sq_draining;
	return 0;
}

void expect_state(struct ibv_qp *qp, enum ibv_qp_state want, const char *what)
{
	static const char *const names[] = { "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR" };
	enum ibv_qp_state got;
	int ret = qp_state(qp, &got, NULL);

	if (ret)
		check(false, "%s: ibv_query_qp: %s", what, strerror(ret));
	else
		check(got == want, "%s: QP 0x%06x in %s (got %s)", what, qp->qp_num,
		      names[want], got <= IBV_QPS_ERR ? names[got] : "?");
}

/* ---- posting and completions ---- */

bool post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, const char *what)
{
	struct ibv_send_wr *bad = NULL;
	int ret = ibv_post_send(qp, wr, &bad);

	if (ret)
		check(false, "%s: ibv_post_send: %s", what, strerror(ret));
	return ret == 0;
}

bool post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, const char *what)
{
	struct ibv_recv_wr *bad = NULL;
	int ret = ibv_post_recv(qp, wr, &bad);

	if (ret)
		check(false, "%s: ibv_post_recv: %s", what, strerror(ret));
	return ret == 0;
}

long elapsed_ms(const struct timespec *since)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - since->tv_sec) * 1000 + (now.tv_nsec - since->tv_nsec) / 1000000;
}

/* One completion of cq within ms: 1, 0 when none came, -1 when polling failed. */
int poll_wc(struct ibv_cq *cq, struct ibv_wc *wc, unsigned int ms)
{
	struct timespec start;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		int n = ibv_poll_cq(cq, 1, wc);

		if (n != 0)
			return n > 0 ? 1 : -1;
		if (elapsed_ms(&start) >= (long)ms)
			return 0;
		usleep(20);	/* leave the CPU to the daemon on a small machine */
	}
}

/* poll_wc within completion_wait_ms, counting what never came. */
int wait_wc(struct ibv_cq *cq, struct ibv_wc *wc)
{
	int got;

	if (missing >= MAX_MISSING)
		return 0;
	got = poll_wc(cq, wc, completion_wait_ms);
	if (got == 0)
		missing++;
	return got;
}

/*
 * The async event type on element (a QP, CQ or SRQ; NULL: any) within ms;
 * other events are listed and skipped.
 */
bool wait_event(struct ibv_context *ctx, enum ibv_event_type type, const void *element,
		unsigned int ms)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct timespec start;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		long left = (long)ms - elapsed_ms(&start);
		struct ibv_async_event ev;
		const void *got;

		if (left <= 0 || poll(&pfd, 1, (int)left) <= 0)
			return false;
		if (ibv_get_async_event(ctx, &ev))
			return false;
		got = ev.event_type == IBV_EVENT_CQ_ERR ? (const void *)ev.element.cq :
		      ev.event_type == IBV_EVENT_SRQ_LIMIT_REACHED ||
		      ev.event_type == IBV_EVENT_SRQ_ERR ? (const void *)ev.element.srq :
		      (const void *)ev.element.qp;
		ibv_ack_async_event(&ev);
		if (ev.event_type == type && (!element || got == element))
			return true;
		printf("note: event %s skipped\n", ibv_event_type_str(ev.event_type));
	}
}

/* The next completion of cq is w; it is copied to *out when out is given. */
bool expect_wc(struct ibv_cq *cq, const char *what, struct want w, struct ibv_wc *out)
{
	struct ibv_wc wc;
	int got = wait_wc(cq, &wc);
	bool ok;

	if (got <= 0) {
		check(false, "%s: wr_id 0x%" PRIx64 " %s: %s", what, w.wr_id, ibv_wc_status_str(w.status),
		      got < 0 ? "ibv_poll_cq failed" :
		      missing >= MAX_MISSING ? "no completion (data path stuck, not waiting)" :
		      "no completion within the time limit");
		return false;
	}
	ok = wc.wr_id == w.wr_id && wc.status == w.status &&
	     (w.opcode < 0 || (int)wc.opcode == w.opcode) &&
	     (w.byte_len < 0 || wc.byte_len == (uint32_t)w.byte_len);
	if (ok)
		check(true, "%s: wr_id 0x%" PRIx64 " %s", what, w.wr_id, ibv_wc_status_str(w.status));
	else
		check(false, "%s: want wr_id 0x%" PRIx64 " %s opcode %d byte_len %ld, got wr_id 0x%"
		      PRIx64 " %s opcode %d byte_len %u vendor_err 0x%x", what, w.wr_id,
		      ibv_wc_status_str(w.status), w.opcode, w.byte_len, wc.wr_id,
		      ibv_wc_status_str(wc.status), (int)wc.opcode, wc.byte_len, wc.vendor_err);
	if (out)
		*out = wc;
	return ok;
}

/* ---- memory windows ---- */

bool bind_window(struct side *s, struct ibv_mw *mw, const struct ibv_mw_bind_info *info, uint64_t wr_id,
		 const char *what)
{
	uint32_t rkey = ibv_inc_rkey(mw->rkey);
	int ret;

	if (mw->type == IBV_MW_TYPE_1) {
		struct ibv_mw_bind bind = { .wr_id = wr_id, .send_flags = IBV_SEND_SIGNALED, .bind_info = *info };

		ret = ibv_bind_mw(s->qp, mw, &bind);	/* sets mw->rkey */
	} else if (s->qp_ex) {
		struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(s->qp);

		ibv_wr_start(qpx);
		qpx->wr_id = wr_id;
		qpx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_bind_mw(qpx, mw, rkey, info);
		ret = ibv_wr_complete(qpx);
		if (!ret)
			mw->rkey = rkey;	/* the application's job for type 2 */
	} else {
		struct ibv_send_wr *bad, wr = {
			.wr_id = wr_id, .opcode = IBV_WR_BIND_MW, .send_flags = IBV_SEND_SIGNALED,
			.bind_mw = { .mw = mw, .rkey = rkey, .bind_info = *info },
		};

		ret = ibv_post_send(s->qp, &wr, &bad);
		if (!ret)
			mw->rkey = rkey;
	}
	if (ret) {
		check(false, "%s: posting the bind: %s", what, strerror(ret));
		return false;
	}
	return expect_wc(s->send_cq, what, (struct want){ wr_id, IBV_WC_SUCCESS, IBV_WC_BIND_MW, -1 }, NULL);
}

struct ibv_xrcd *xrcd_open(struct ibv_context *ctx, int fd, int oflags)
{
	struct ibv_xrcd_init_attr attr = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = fd,
		.oflags = oflags,
	};

	return ibv_open_xrcd(ctx, &attr);
}
