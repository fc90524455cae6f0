/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Fuzz of the daemon's packet path. Two RC QP pairs between two devices
 * move real traffic (WRITE, READ, SEND, atomics, both ways) while this
 * program sends mutated packets at them with a correct ICRC, built from
 * the codecs of net/roce/roce_hdr.h: requests and responses of every RC opcode
 * (now and then any opcode at all) with the PSN near what the QP expects
 * or anywhere, the QPN right or not, BTH flags, pad and version varied,
 * RETH and AtomicETH addresses at, inside and past the registered
 * regions, keys right, of other MRs or random, lengths at every boundary,
 * AETH syndromes of every kind, payloads of every size, truncated
 * packets. A QP that fails is replaced by a fresh pair.
 *
 * Every registered region lies between unregistered guard pages, and one
 * MR has no remote rights at all; none of them may change. After at least
 * PACKETS fuzz packets reached the daemon (its port counters say so) it
 * must answer `rocemu status`, and a fresh pair must move data.
 *
 *   rc_fuzz DEVICE_A DEVICE_B ROCEMU [PACKETS [SEED]]
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "tests/e2e/harness/forge.h"
#include "tests/e2e/harness/fuzz.h"
#include "tests/e2e/harness/verbs_pair.h"

#define PAGE 4096
#define RW_LEN (2 * PAGE)	/* every remote right */
#define RO_LEN PAGE		/* no remote right, no local write: nothing may change it */
#define LOCAL_LEN (2 * PAGE)	/* local write: READ results, receives */
#define ARENA_LEN (4 * PAGE + RW_LEN + RO_LEN + LOCAL_LEN)
#define GUARD_FILL 0xc5
#define RO_FILL 0x5a
#define MTU 1024		/* IBV_MTU_1024, as qp_connect sets it */
#define NPAIRS 2
#define BATCH 32		/* fuzz packets between two looks at the QPs */
#define DEPTH 6			/* real WRs in flight per QP */
#define RECVS 8			/* receives kept posted per QP */
#define MSG_MAX (4 * MTU)	/* real messages of up to 4 packets */

/* One device's memory: three MRs, each between unregistered guard pages. */
struct arena {
	uint8_t *base;
	uint8_t *rw, *ro, *local;
	struct ibv_mr *rw_mr, *ro_mr, *local_mr;
};

/* One end of a pair: its QP, and the PSNs of the WRs it posted and saw completed. */
struct end {
	struct side *side;
	struct arena *mem;
	struct end *peer;
	struct forge *from_peer;	/* bound to the peer's device address */
	uint32_t dst;			/* its device's address */
	uint32_t sq_psn;
	uint32_t posted, completed;	/* send WRs */
	uint32_t posted_psns, completed_psns;
	unsigned int recvs;
};

struct fuzz_pair {
	struct pair p;
	struct end e[2];
	bool open;
};

static struct arena arenas[2];
static struct forge socks[2];
static struct fuzz_pair pairs[NPAIRS];
static struct side_spec spec;
static unsigned long recycles;
static long slowest_ms;		/* the longest control round trip (a QP query) so far */
static uint8_t pkt[FORGE_MAX];

/* ---- memory ---- */

static bool arena_open(struct arena *m, struct dev *d)
{
	int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		 IBV_ACCESS_REMOTE_ATOMIC;

	m->base = mmap(NULL, ARENA_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m->base == MAP_FAILED) {
		m->base = NULL;
		check(false, "mmap of %d bytes: %s", ARENA_LEN, strerror(errno));
		return false;
	}
	memset(m->base, GUARD_FILL, ARENA_LEN);
	m->rw = m->base + PAGE;
	m->ro = m->rw + RW_LEN + PAGE;
	m->local = m->ro + RO_LEN + PAGE;
	memset(m->rw, 0, RW_LEN);
	memset(m->ro, RO_FILL, RO_LEN);
	memset(m->local, 0, LOCAL_LEN);
	m->rw_mr = ibv_reg_mr(d->pd, m->rw, RW_LEN, rw);
	m->ro_mr = ibv_reg_mr(d->pd, m->ro, RO_LEN, 0);
	m->local_mr = ibv_reg_mr(d->pd, m->local, LOCAL_LEN, IBV_ACCESS_LOCAL_WRITE);
	if (!m->rw_mr || !m->ro_mr || !m->local_mr) {
		check(false, "%s: registering the arena: %s", d->name, strerror(errno));
		return false;
	}
	return true;
}

static void arena_close(struct arena *m)
{
	if (m->rw_mr)
		ibv_dereg_mr(m->rw_mr);
	if (m->ro_mr)
		ibv_dereg_mr(m->ro_mr);
	if (m->local_mr)
		ibv_dereg_mr(m->local_mr);
	if (m->base)
		munmap(m->base, ARENA_LEN);
	memset(m, 0, sizeof(*m));
}

/* The first byte of [p, p + len) that is not fill, or len. */
static size_t first_changed(const uint8_t *p, size_t len, uint8_t fill)
{
	size_t i;

	for (i = 0; i < len && p[i] == fill; i++)
		;
	return i;
}

static void arena_check(const struct arena *m, const char *dev)
{
	const struct {
		const char *what;
		const uint8_t *p;
		size_t len;
		uint8_t fill;
	} parts[] = {
		{ "guard page before the remote MR", m->base, PAGE, GUARD_FILL },
		{ "guard page between the remote and the read-only MR", m->rw + RW_LEN, PAGE, GUARD_FILL },
		{ "read-only MR", m->ro, RO_LEN, RO_FILL },
		{ "guard page between the read-only and the local MR", m->ro + RO_LEN, PAGE, GUARD_FILL },
		{ "guard page after the local MR", m->local + LOCAL_LEN, PAGE, GUARD_FILL },
	};
	size_t i, at;

	for (i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		at = first_changed(parts[i].p, parts[i].len, parts[i].fill);
		check(at == parts[i].len, "%s: %s untouched%s", dev, parts[i].what,
		      at == parts[i].len ? "" : " (NOT: a byte changed)");
	}
}

/* ---- pairs and their real traffic ---- */

static void end_init(struct end *e, struct side *s, int dev, struct end *peer)
{
	*e = (struct end){
		.side = s, .mem = &arenas[dev], .peer = peer, .from_peer = &socks[!dev],
		.dst = socks[dev].self.sin_addr.s_addr, .sq_psn = dev ? PSN_B : PSN_A,
	};
}

static bool fuzz_pair_open(struct fuzz_pair *fp)
{
	fp->open = pair_open(&fp->p, &spec, &spec);
	end_init(&fp->e[0], &fp->p.a, 0, &fp->e[1]);
	end_init(&fp->e[1], &fp->p.b, 1, &fp->e[0]);
	return fp->open;
}

/*
 * Read what async events came (the pipe must not fill). Never acked: the
 * QP or CQ an event names may be gone by then, and nothing waits for acks.
 */
static void async_drain(struct dev *d)
{
	struct ibv_async_event ev;

	while (d->ctx && !ibv_get_async_event(d->ctx, &ev))
		;
}

static bool fuzz_pair_recycle(struct fuzz_pair *fp)
{
	async_drain(&dev_a);
	async_drain(&dev_b);
	pair_close(&fp->p);
	recycles++;
	return fuzz_pair_open(fp);
}

static void post_recvs(struct end *e)
{
	while (e->recvs < RECVS) {
		struct ibv_sge sge = { .addr = (uintptr_t)e->mem->local + LOCAL_LEN - MSG_MAX,
				       .length = MSG_MAX, .lkey = e->mem->local_mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1 }, *bad;

		if (ibv_post_recv(e->side->qp, &wr, &bad))
			return;
		e->recvs++;
	}
}

/* One real WR from e to its peer, into and out of the registered regions only; wr_id: its PSNs. */
static void post_real(struct end *e)
{
	struct arena *m = e->mem, *pm = e->peer->mem;
	uint32_t len = 1 + fuzz_below(fuzz_chance(75) ? MTU : MSG_MAX);
	uint32_t off = fuzz_below(RW_LEN - len + 1);
	struct ibv_sge sge = { .addr = (uintptr_t)m->local + fuzz_below(LOCAL_LEN - MSG_MAX - len),
			       .length = len, .lkey = m->local_mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .send_flags = IBV_SEND_SIGNALED },
			   *bad;

	switch (fuzz_below(5)) {
	case 0:
		wr.opcode = IBV_WR_RDMA_WRITE;
		if (fuzz_chance(50)) {	/* the read-only MR as a source: read, never written */
			sge.addr = (uintptr_t)m->ro + fuzz_below(RO_LEN - len + 1);
			sge.lkey = m->ro_mr->lkey;
		}
		break;
	case 1:
		wr.opcode = IBV_WR_RDMA_READ;
		break;
	case 2:
		wr.opcode = IBV_WR_SEND;
		break;
	default:
		wr.opcode = fuzz_chance(50) ? IBV_WR_ATOMIC_FETCH_AND_ADD : IBV_WR_ATOMIC_CMP_AND_SWP;
		sge.addr &= ~(uint64_t)7;
		sge.length = len = 8;
		wr.wr.atomic.remote_addr = (uintptr_t)pm->rw + (off & ~7u);
		wr.wr.atomic.rkey = pm->rw_mr->rkey;
		wr.wr.atomic.compare_add = fuzz_rnd();
		wr.wr.atomic.swap = fuzz_rnd();
		break;
	}
	if (wr.opcode == IBV_WR_RDMA_WRITE || wr.opcode == IBV_WR_RDMA_READ) {
		wr.wr.rdma.remote_addr = (uintptr_t)pm->rw + off;
		wr.wr.rdma.rkey = pm->rw_mr->rkey;
	}
	wr.wr_id = (len + MTU - 1) / MTU;
	if (!ibv_post_send(e->side->qp, &wr, &bad)) {
		e->posted++;
		e->posted_psns += (uint32_t)wr.wr_id;
	}
}

static void end_service(struct end *e)
{
	struct ibv_wc wc[16];
	int n, i;

	while ((n = ibv_poll_cq(e->side->send_cq, 16, wc)) > 0) {
		e->completed += (uint32_t)n;
		for (i = 0; i < n; i++)
			e->completed_psns += (uint32_t)wc[i].wr_id;
	}
	while ((n = ibv_poll_cq(e->side->recv_cq, 16, wc)) > 0)
		for (i = 0; i < n; i++)
			e->recvs--;
	post_recvs(e);
	while (e->posted - e->completed < DEPTH && e->posted - e->completed < spec.cap.max_send_wr)
		post_real(e);
}

static bool in_rts(struct side *s)
{
	enum ibv_qp_state state;
	struct timespec start;
	bool rts;
	long ms;

	clock_gettime(CLOCK_MONOTONIC, &start);
	rts = !qp_state(s->qp, &state, NULL) && state == IBV_QPS_RTS;
	ms = elapsed_ms(&start);
	if (ms > slowest_ms)
		slowest_ms = ms;
	return rts;
}

/* Keep the real traffic going; a pair with a QP out of RTS is replaced. */
static bool pairs_service(void)
{
	for (unsigned int i = 0; i < NPAIRS; i++) {
		struct fuzz_pair *fp = &pairs[i];

		if ((!fp->open || !in_rts(&fp->p.a) || !in_rts(&fp->p.b)) && !fuzz_pair_recycle(fp))
			return false;
		end_service(&fp->e[0]);
		end_service(&fp->e[1]);
	}
	return true;
}

/* ---- fuzz packets ---- */

/* The RC opcodes, from the opcode table: requests and responses. */
static uint8_t request_ops[256], response_ops[256];
static uint32_t n_request_ops, n_response_ops;

static void opcodes_init(void)
{
	for (unsigned int op = 0; op < 256; op++) {
		const struct rocemu_opcode_info *info = rocemu_opcode_info((uint8_t)op);

		if (!info || !(info->flags & ROCEMU_OPF_RC))
			continue;
		if (info->flags & ROCEMU_OPF_REQ)
			request_ops[n_request_ops++] = (uint8_t)op;
		else
			response_ops[n_response_ops++] = (uint8_t)op;
	}
}

/* An address for a RETH or AtomicETH aimed at t's memory: inside, at the edges, past them, anywhere. */
static uint64_t pick_va(const struct end *t, uint32_t len)
{
	uint64_t rw = (uintptr_t)t->mem->rw;

	switch (fuzz_below(10)) {
	case 0:
		return rw;
	case 1:
		return rw + RW_LEN - len;
	case 2:
		return rw + RW_LEN - len + 1 + fuzz_below(64);	/* just past the end */
	case 3:
		return rw - 1 - fuzz_below(64);			/* just before it */
	case 4:
		return (uintptr_t)t->mem->ro + fuzz_below(RO_LEN);
	case 5:
		return (uintptr_t)t->mem->base + fuzz_below(PAGE);	/* a guard page */
	case 6:
		return fuzz_rnd();
	case 7:
		return UINT64_MAX - fuzz_below(4096);
	default:
		return rw + fuzz_below(RW_LEN);
	}
}

static uint32_t pick_rkey(const struct end *t)
{
	const struct arena *m = t->mem;

	switch (fuzz_below(12)) {
	case 0:
		return m->ro_mr->rkey;
	case 1:
		return m->local_mr->rkey;
	case 2:
		return t->peer->mem->rw_mr->rkey;
	case 3:
		return (uint32_t)fuzz_rnd();
	case 4:
		return m->rw_mr->rkey ^ (1u << fuzz_below(32));
	case 5:
		return m->rw_mr->rkey | 0x80000000u;	/* a memory window's key space */
	default:
		return m->rw_mr->rkey;
	}
}

static uint32_t pick_len(void)
{
	static const uint32_t edges[] = {
		0, 1, 7, 8, 9, MTU - 1, MTU, MTU + 1, 2 * MTU, RW_LEN - 1, RW_LEN, RW_LEN + 1,
		0x7fffffff, 0x80000000u, 0xffffffffu,
	};

	if (fuzz_chance(70))
		return edges[fuzz_below(sizeof(edges) / sizeof(edges[0]))];
	return fuzz_chance(50) ? fuzz_below(4 * MTU) : (uint32_t)fuzz_rnd();
}

static uint8_t pick_syndrome(void)
{
	switch (fuzz_below(6)) {
	case 0:
		return (uint8_t)fuzz_rnd();
	case 1:
		return (uint8_t)(ROCEMU_AETH_RNR_NAK << 5 | fuzz_below(32));
	case 2:
	case 3:
		return (uint8_t)(ROCEMU_AETH_NAK << 5 | fuzz_below(6));
	default:
		return ROCEMU_AETH_ACK << 5 | ROCEMU_AETH_CREDITS_INVALID;
	}
}

static uint32_t pick_paylen(void)
{
	switch (fuzz_below(10)) {
	case 0:
	case 1:
		return 0;
	case 2:
	case 3:
		return MTU;
	case 4:
		return MTU + 1 + fuzz_below(600);
	case 5:
		return fuzz_below(4 * MTU);
	default:
		return 1 + fuzz_below(MTU);
	}
}

/* The destination QPN: t's mostly, another QP's or anything now and then. */
static uint32_t pick_qpn(const struct end *t)
{
	if (fuzz_chance(90))
		return t->side->qp->qp_num;
	if (fuzz_chance(50))
		return t->peer->side->qp->qp_num;
	return (uint32_t)fuzz_rnd() & ROCEMU_QPN_MASK;
}

/* Near what t expects: requests near its peer's next PSN, responses near its own oldest. */
static uint32_t pick_psn(const struct end *t, bool request)
{
	uint32_t base = request ? t->peer->sq_psn + t->peer->posted_psns
				: t->sq_psn + t->completed_psns;

	if (fuzz_chance(85))
		return rocemu_psn_add(base, (uint32_t)((int32_t)fuzz_below(16) - 4));
	return (uint32_t)fuzz_rnd() & ROCEMU_PSN_MASK;
}

/* Fill the extension headers the opcode carries with values aimed at t. */
static void headers_fuzz(uint8_t *p, const struct end *t)
{
	uint8_t *h;

	if ((h = rocemu_pkt_reth(p))) {
		uint32_t len = pick_len();

		rocemu_reth_set_va(h, pick_va(t, len < RW_LEN ? len : 0));
		rocemu_reth_set_rkey(h, pick_rkey(t));
		rocemu_reth_set_dma_len(h, len);
	}
	if ((h = rocemu_pkt_atmeth(p))) {
		uint64_t va = pick_va(t, 8);

		rocemu_atmeth_set_va(h, fuzz_chance(80) ? va & ~7ull : va);
		rocemu_atmeth_set_rkey(h, pick_rkey(t));
		rocemu_atmeth_set_swap_add(h, fuzz_rnd());
		rocemu_atmeth_set_compare(h, fuzz_chance(50) ? 0 : fuzz_rnd());
	}
	if ((h = rocemu_pkt_aeth(p))) {
		rocemu_aeth_set_syndrome(h, pick_syndrome());
		rocemu_aeth_set_msn(h, (uint32_t)fuzz_rnd());
	}
	if ((h = rocemu_pkt_atmack(p)))
		rocemu_atmack_set_orig(h, fuzz_rnd());
	if ((h = rocemu_pkt_immdt(p)))
		rocemu_immdt_set_imm(h, (uint32_t)fuzz_rnd());
	/* Keys of the other device or none: invalidating the target's MRs would end the traffic. */
	if ((h = rocemu_pkt_ieth(p)))
		rocemu_ieth_set_rkey(h, fuzz_chance(50) ? t->peer->mem->rw_mr->rkey : (uint32_t)fuzz_rnd());
}

/* One mutated packet for t at pkt; returns its length without the ICRC. */
static size_t fuzz_packet(const struct end *t)
{
	bool request = fuzz_chance(60);
	uint8_t op = request ? request_ops[fuzz_below(n_request_ops)] : response_ops[fuzz_below(n_response_ops)];
	const struct rocemu_opcode_info *info;
	uint32_t paylen;
	size_t len, i;

	if (fuzz_chance(3))
		op = (uint8_t)fuzz_rnd();	/* anything, known or not */
	info = rocemu_opcode_info(op);
	paylen = info && (info->hdr_mask & ROCEMU_HDRM_PAYLOAD) ? pick_paylen() : 0;
	if (!info)
		op = ROCEMU_OP_RC_SEND_ONLY;	/* build as a SEND, then the opcode byte changes */
	len = forge_build(pkt, op, pick_qpn(t), pick_psn(t, request), fuzz_chance(50), paylen, 0);
	for (i = 0; i < paylen; i += 8) {
		uint64_t v = fuzz_rnd();

		memcpy(pkt + len - paylen - rocemu_pad_bytes(paylen) + i, &v,
		       paylen - i < 8 ? paylen - i : 8);
	}
	headers_fuzz(pkt, t);
	if (!info)
		rocemu_bth_set_opcode(pkt, (uint8_t)fuzz_rnd());
	rocemu_bth_set_se(pkt, fuzz_chance(20));
	rocemu_bth_set_m(pkt, fuzz_chance(10));
	if (fuzz_chance(5))
		rocemu_bth_set_padcnt(pkt, (uint8_t)fuzz_below(4));
	if (fuzz_chance(2))
		rocemu_bth_set_tver(pkt, (uint8_t)fuzz_below(16));
	if (fuzz_chance(3))
		rocemu_bth_set_pkey(pkt, (uint16_t)fuzz_rnd());
	if (fuzz_chance(5))
		rocemu_bth_set_opcode(pkt, request_ops[fuzz_below(n_request_ops)]);
	return fuzz_damage(pkt, len);
}

/* What the daemon made of it: its drop and sequence counters, as `rocemu stats` prints them. */
static void print_counters(void)
{
	static const char *const names[] = {
		" rx_dropped ", " out_of_sequence ", " duplicate_request ", " packet_seq_err ",
		" rx_ghost_acks ", " rx_bad_responses ", " rx_bad_duplicates ", " rx_stale_atomics ",
		" rx_busy_rd_atomics ",
	};
	static char out[65536];
	char *line, *save = NULL;

	if (!cli_output("stats", out, sizeof(out)))
		return;
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
			if (strstr(line, names[k]))
				puts(line);
}

/* A fresh pair, on fresh MRs, moves a WRITE and a READ of a pattern. */
static void data_after(void)
{
	int rights = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	struct fuzz_pair *fp = &pairs[0];
	struct buf *src, *dst, *back;
	struct ibv_sge sge;
	struct ibv_send_wr wr;

	if (!fuzz_pair_recycle(fp))
		return;
	src = buf_new(&dev_a, MTU, MTU, IBV_ACCESS_LOCAL_WRITE, 0);
	dst = buf_new(&dev_b, MTU, MTU, rights, UNTOUCHED);
	back = buf_new(&dev_a, MTU, MTU, IBV_ACCESS_LOCAL_WRITE, UNTOUCHED);
	if (!src || !dst || !back)
		return;
	fill_pattern(src->p, MTU, 9, 0);
	sge = sge_of(src, 0, MTU);
	wr = (struct ibv_send_wr){
		.wr_id = 0x21, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr_of(dst, 0), .rkey = dst->mr->rkey },
	};
	if (!post_send(fp->p.a.qp, &wr, "WRITE after the fuzz") ||
	    !expect_wc(fp->p.a.send_cq, "WRITE after the fuzz", (struct want){ 0x21, IBV_WC_SUCCESS, -1, -1 }, NULL))
		return;
	sge = sge_of(back, 0, MTU);
	wr.wr_id = 0x22;
	wr.opcode = IBV_WR_RDMA_READ;
	if (!post_send(fp->p.a.qp, &wr, "READ after the fuzz") ||
	    !expect_wc(fp->p.a.send_cq, "READ after the fuzz", (struct want){ 0x22, IBV_WC_SUCCESS, -1, MTU }, NULL))
		return;
	check_pattern(back->p, MTU, 9, 0, "data written and read back after the fuzz");
}

/* A packet for one end of a pair picked at random, from its peer's address. */
static void next_packet(struct fuzz_packet *p)
{
	struct fuzz_pair *fp = &pairs[fuzz_below(NPAIRS)];
	struct end *t = &fp->e[fuzz_below(2)];

	*p = (struct fuzz_packet){ .data = pkt, .len = fuzz_packet(t), .from = t->from_peer,
				   .dst = t->dst };
}

int main(int argc, char **argv)
{
	const struct fuzz_source src = { .service = pairs_service, .next = next_packet,
					 .batch = BATCH };
	unsigned long want;
	unsigned int i;

	if (!fuzz_args(argc, argv, &want))
		return 2;
	opcodes_init();
	spec = side_default;
	/* A QP that loses its way fails fast and is replaced. */
	spec.knobs.timeout = 10;
	spec.knobs.retry_cnt = 2;
	spec.knobs.rnr_retry = 2;
	spec.knobs.min_rnr_timer = 1;
	memset(socks, 0, sizeof(socks));
	socks[0].fd = socks[1].fd = -1;
	if (!dev_open(&dev_a, argv[1]) || !dev_open(&dev_b, argv[2]) ||
	    !forge_open(&socks[0], gid_ipv4(&dev_a.gid), 0) ||
	    !forge_open(&socks[1], gid_ipv4(&dev_b.gid), 0) ||
	    !arena_open(&arenas[0], &dev_a) || !arena_open(&arenas[1], &dev_b))
		goto out;
	fcntl(dev_a.ctx->async_fd, F_SETFL, O_NONBLOCK);
	fcntl(dev_b.ctx->async_fd, F_SETFL, O_NONBLOCK);
	for (i = 0; i < NPAIRS; i++)
		if (!fuzz_pair_open(&pairs[i]))
			goto out;
	fuzz_run(dev_a.name, dev_b.name, want, &src);
	printf("%lu pairs replaced, the slowest QP query %ld ms\n", recycles, slowest_ms);
	cli_status_answers("after the fuzz");
	arena_check(&arenas[0], dev_a.name);
	arena_check(&arenas[1], dev_b.name);
	data_after();
	print_counters();
	cli_status_answers("at the end");
out:
	bufs_free();
	async_drain(&dev_a);
	async_drain(&dev_b);
	for (i = 0; i < NPAIRS; i++)
		pair_close(&pairs[i].p);
	arena_close(&arenas[0]);
	arena_close(&arenas[1]);
	forge_close(&socks[0]);
	forge_close(&socks[1]);
	dev_close(&dev_b);
	dev_close(&dev_a);
	return checks_finish();
}
