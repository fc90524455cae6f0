/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * A READ of 1 GiB does not hold the daemon (the responder answers a burst
 * per turn of its loop):
 *
 * - while one RC QP pair moves it, `rocemu status` answers
 *   every time it is asked and a second QP pair between the same devices
 *   keeps completing small WRITEs; then the READ
 *   completes with its data;
 * - a READ of 1 GiB forged by a fake peer (this program, with a UDP socket
 *   on port 4791 of its own address), and right behind it WRITEs to another
 *   QP: the READ is answered and the WRITEs are ACKed. How many responses
 *   come after the ACK is printed, not checked: it depends on when this
 *   program runs (a loaded machine may hold it until the READ is done); the
 *   first check shows the loop is not held, whatever the scheduling.
 *
 * The READ's source is 1 GiB of MAP_NORESERVE anonymous memory, untouched
 * but for a few pattern pages: an untouched page reads as zeros and costs
 * no memory. The first check's destination is 16 SGEs of 64 MiB: the first
 * over a buffer of its own, the other 15 over one shared buffer, which ends
 * up holding the READ's last 64 MiB; 128 MiB show the READ's first and last
 * parts.
 *
 *   rc_long_read DEVICE_A DEVICE_B ROCEMU PEER_ADDR
 *       ROCEMU: the CLI; PEER_ADDR: a free loopback address for the fake peer.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include "tests/e2e/harness/forge.h"
#include "net/udp/udp_port.h"
#include "tests/e2e/harness/verbs_pair.h"

#define READ_BYTES (1ull << 30)
#define CHUNK_BYTES (64u << 20)		/* one destination SGE */
#define NCHUNKS ((unsigned int)(READ_BYTES / CHUNK_BYTES))
#define PAGE_BYTES 4096u
#define LAST_CHUNK (READ_BYTES - CHUNK_BYTES)
#define SEED 11
#define SMALL_MS 30000			/* a small WRITE not completed by then hangs */
#define SMALL_BYTES 64
#define SMALLS_PER_STATUS 8
#define READ_WAIT_MS 60000		/* the READ takes seconds; on a daemon it holds, far more */
#define READ_WR_ID 0x1eadu
#define FAKE_READER_QPN 0x00bead	/* the fake peer's QP asking for the READ */
#define FAKE_WRITER_QPN 0x00beef	/* and the one WRITEing meanwhile */
#define PROBES 16			/* WRITEs while the forged READ streams */
#define PROBE_BYTES 4
#define PROBE_RESEND_MS 200		/* a WRITE or its ACK lost among the responses: again */
#define ACK_WAIT_MS 5000
#define READS_AFTER 100			/* READ responses looked for after the last ACK */
#define PEER_RCVBUF (64 << 20)		/* root may take more than rmem_max */

static uint32_t peer_addr;	/* network order */

/* Source pages written with the pattern: the READ's first and last ones and some in between. */
static const uint64_t pattern_pages[] = {
	0, CHUNK_BYTES / 2, LAST_CHUNK, LAST_CHUNK + CHUNK_BYTES / 2, READ_BYTES - PAGE_BYTES,
};

/* One small WRITE of round's pattern from s's a to its b, completed (SMALL_MS: a hang). */
static bool small_write(struct pair *s, struct buf *src, struct buf *dst, unsigned int round,
			long *slowest_ms)
{
	struct ibv_sge sge = sge_of(src, 0, SMALL_BYTES);
	struct ibv_send_wr wr = {
		.wr_id = round, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr_of(dst, 0), .rkey = dst->mr->rkey },
	};
	struct timespec start;
	struct ibv_wc wc;
	long took;
	int got;

	fill_pattern(src->p, SMALL_BYTES, round, 0);
	clock_gettime(CLOCK_MONOTONIC, &start);
	if (!post_send(s->a.qp, &wr, "small WRITE"))
		return false;
	got = poll_wc(s->a.send_cq, &wc, SMALL_MS);
	took = elapsed_ms(&start);
	if (got != 1 || wc.status != IBV_WC_SUCCESS || wc.wr_id != round) {
		check(false, "small WRITE %u during the READ: %s", round,
		      got == 1 ? ibv_wc_status_str(wc.status) : "no completion within 30 s");
		return false;
	}
	if (took > *slowest_ms)
		*slowest_ms = took;
	return true;
}

/* 1 GiB of MAP_NORESERVE memory with the pattern pages, registered on dev_b for REMOTE_READ. */
static uint8_t *source_new(struct ibv_mr **mr)
{
	uint8_t *source = mmap(NULL, READ_BYTES, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	unsigned int i;

	*mr = NULL;
	if (source == MAP_FAILED) {
		check(false, "mmap of 1 GiB with MAP_NORESERVE");
		return NULL;
	}
	for (i = 0; i < sizeof(pattern_pages) / sizeof(pattern_pages[0]); i++)
		fill_pattern(source + pattern_pages[i], PAGE_BYTES, SEED, pattern_pages[i]);
	*mr = ibv_reg_mr(dev_b.pd, source, READ_BYTES, IBV_ACCESS_REMOTE_READ);
	if (!*mr)
		check(false, "%s: ibv_reg_mr of 1 GiB", dev_b.name);
	return source;
}

static void source_free(uint8_t *source, struct ibv_mr *mr)
{
	if (mr)
		ibv_dereg_mr(mr);
	if (source)
		munmap(source, READ_BYTES);
}

/* Page off of the READ, landed at p, is the pattern (or zeros where the source was untouched). */
static void check_page(const uint8_t *p, uint64_t off, bool pattern)
{
	char what[96];

	snprintf(what, sizeof(what), "READ data at %llu MiB + %llu", (unsigned long long)(off >> 20),
		 (unsigned long long)(off & ((1u << 20) - 1)));
	if (pattern)
		check_pattern(p, PAGE_BYTES, SEED, off, what);
	else
		check(all_bytes(p, PAGE_BYTES, 0), "%s: zeros", what);
}

static void check_long_read(void)
{
	struct side_spec big_spec = side_default, small_spec = side_default;
	struct ibv_sge sge[NCHUNKS];
	struct ibv_send_wr wr = {
		.wr_id = READ_WR_ID, .sg_list = sge, .num_sge = NCHUNKS, .opcode = IBV_WR_RDMA_READ,
		.send_flags = IBV_SEND_SIGNALED,
	};
	unsigned int statuses = 0, smalls = 0, i;
	struct buf *first, *shared, *src, *dst;
	struct ibv_mr *source_mr = NULL;
	struct pair big = { 0 }, small = { 0 };
	struct timespec start;
	long slowest_ms = 0;
	uint8_t *source = NULL;
	struct ibv_wc wc;
	int got = 0;

	big_spec.cap.max_send_sge = NCHUNKS;
	big_spec.knobs.path_mtu = IBV_MTU_4096;
	if (!pair_open(&big, &big_spec, &big_spec) || !pair_open(&small, &small_spec, &small_spec))
		goto out;
	check(big.a.cap.max_send_sge >= NCHUNKS, "the READ's QP takes %u SGEs (granted %u)", NCHUNKS,
	      big.a.cap.max_send_sge);
	source = source_new(&source_mr);
	first = buf_new(&dev_a, CHUNK_BYTES, CHUNK_BYTES, IBV_ACCESS_LOCAL_WRITE, UNTOUCHED);
	shared = buf_new(&dev_a, CHUNK_BYTES, CHUNK_BYTES, IBV_ACCESS_LOCAL_WRITE, UNTOUCHED);
	src = buf_new(&dev_a, SMALL_BYTES, SMALL_BYTES, IBV_ACCESS_LOCAL_WRITE, 0);
	dst = buf_new(&dev_b, SMALL_BYTES, SMALL_BYTES,
		      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, UNTOUCHED);
	if (!source_mr || !first || !shared || !src || !dst) {
		check(false, "registering the READ's and the WRITEs' memory");
		goto out;
	}
	sge[0] = sge_of(first, 0, CHUNK_BYTES);
	for (i = 1; i < NCHUNKS; i++)
		sge[i] = sge_of(shared, 0, CHUNK_BYTES);
	wr.wr.rdma.remote_addr = (uintptr_t)source;
	wr.wr.rdma.rkey = source_mr->rkey;

	clock_gettime(CLOCK_MONOTONIC, &start);
	if (!post_send(big.a.qp, &wr, "READ of 1 GiB"))
		goto out;
	/* Until the READ completes: the CLI and the other pair are served all along. */
	while (!(got = poll_wc(big.a.send_cq, &wc, 0))) {
		if (elapsed_ms(&start) > READ_WAIT_MS) {
			check(false, "the READ of 1 GiB completes within %d s", READ_WAIT_MS / 1000);
			goto out;
		}
		if (!cli_status_answers("during the READ"))
			goto out;
		statuses++;
		for (i = 0; i < SMALLS_PER_STATUS; i++, smalls++)
			if (!small_write(&small, src, dst, smalls, &slowest_ms))
				goto out;
	}
	check(got == 1 && wc.wr_id == READ_WR_ID && wc.status == IBV_WC_SUCCESS &&
	      wc.byte_len == READ_BYTES, "the READ of 1 GiB completes in %ld ms: %s, %u bytes",
	      elapsed_ms(&start), got == 1 ? ibv_wc_status_str(wc.status) : "poll failed",
	      got == 1 ? wc.byte_len : 0);
	check(statuses > 0 && smalls > 0,
	      "while the READ was under way, rocemu status answered %u times and %u small WRITEs completed (slowest %ld ms)",
	      statuses, smalls, slowest_ms);
	check_pattern(dst->p, SMALL_BYTES, smalls - 1, 0, "the last small WRITE's data");
	for (i = 0; i < sizeof(pattern_pages) / sizeof(pattern_pages[0]); i++) {
		uint64_t off = pattern_pages[i];

		check_page(off < CHUNK_BYTES ? first->p + off : shared->p + (off - LAST_CHUNK), off,
			   true);
	}
	check_page(first->p + PAGE_BYTES, PAGE_BYTES, false);
	check_page(shared->p + PAGE_BYTES, LAST_CHUNK + PAGE_BYTES, false);
	expect_state(big.b.qp, IBV_QPS_RTS, "the responder after the READ");
	cli_status_answers("after the READ");
out:
	bufs_free();
	pair_close(&small);
	pair_close(&big);
	source_free(source, source_mr);
}

/* ---- a forged READ: the fake peer sees another QP's ACKs while its responses flow ---- */

/*
 * What the fake peer receives until the ACK of the writer's psn (at most
 * ACK_WAIT_MS; the WRITE at pkt goes again every PROBE_RESEND_MS), READ
 * responses counted in *reads. False when no ACK came.
 */
static bool await_ack(struct forge *peer, uint8_t *pkt, size_t len, uint32_t psn,
		      unsigned int *reads)
{
	static uint8_t in[FORGE_MAX];
	struct timespec start, sent;

	clock_gettime(CLOCK_MONOTONIC, &start);
	sent = start;
	while (elapsed_ms(&start) < ACK_WAIT_MS) {
		ssize_t n = forge_recv(peer, in, sizeof(in), PROBE_RESEND_MS / 4);
		const struct rocemu_opcode_info *info = n > 0 ? rocemu_pkt_info(in) : NULL;

		if (info && rocemu_bth_destqp(in) == FAKE_READER_QPN && (info->flags & ROCEMU_OPF_READ))
			(*reads)++;
		else if (info && rocemu_bth_destqp(in) == FAKE_WRITER_QPN &&
			 rocemu_bth_opcode(in) == ROCEMU_OP_RC_ACKNOWLEDGE && rocemu_bth_psn(in) == psn)
			return rocemu_aeth_syndrome_type(rocemu_aeth_syndrome(rocemu_pkt_aeth(in))) ==
			       ROCEMU_AETH_ACK;
		if (elapsed_ms(&sent) >= PROBE_RESEND_MS) {
			if (!forge_send(peer, gid_ipv4(&dev_b.gid), pkt, len))
				return false;
			clock_gettime(CLOCK_MONOTONIC, &sent);
		}
	}
	return false;
}

/* READ responses that still come within ACK_WAIT_MS, up to want. */
static unsigned int reads_still_coming(struct forge *peer, unsigned int want)
{
	static uint8_t in[FORGE_MAX];
	struct timespec start;
	unsigned int reads = 0;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (reads < want && elapsed_ms(&start) < ACK_WAIT_MS) {
		ssize_t n = forge_recv(peer, in, sizeof(in), ACK_WAIT_MS / 10);
		const struct rocemu_opcode_info *info = n > 0 ? rocemu_pkt_info(in) : NULL;

		if (info && rocemu_bth_destqp(in) == FAKE_READER_QPN && (info->flags & ROCEMU_OPF_READ))
			reads++;
	}
	return reads;
}

/* Connect a QP of dev_b to the fake peer's QP fake_qpn. */
static bool connect_to_peer(struct side *s, const struct side_spec *spec, uint32_t fake_qpn)
{
	union ibv_gid peer_gid = { .raw = { [10] = 0xff, [11] = 0xff } };

	memcpy(peer_gid.raw + 12, &peer_addr, sizeof(peer_addr));
	if (!side_open(s, &dev_b, spec))
		return false;
	if (qp_connect(s->qp, fake_qpn, &peer_gid, PSN_B, PSN_A, &spec->knobs)) {
		check(false, "connecting QP 0x%06x to the fake peer", s->qp->qp_num);
		return false;
	}
	return true;
}

static void check_forged_read(void)
{
	static uint8_t read_req[FORGE_MAX], write_req[FORGE_MAX];
	struct side_spec spec = side_default;
	struct side reader = { 0 }, writer = { 0 };
	struct forge peer = { .fd = -1 };
	unsigned int reads = 0, acked = 0, after = 0;
	int rcvbuf = PEER_RCVBUF;
	struct ibv_mr *source_mr = NULL;
	uint8_t *source = NULL;
	struct buf *dst;
	size_t len;

	spec.knobs.path_mtu = IBV_MTU_4096;
	if (!connect_to_peer(&reader, &spec, FAKE_READER_QPN) ||
	    !connect_to_peer(&writer, &spec, FAKE_WRITER_QPN))
		goto out;
	source = source_new(&source_mr);
	dst = buf_new(&dev_b, PROBE_BYTES, PROBE_BYTES,
		      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, UNTOUCHED);
	if (!source_mr || !dst || !forge_open(&peer, peer_addr, ROCEMU_ROCEV2_PORT))
		goto out;
	/* Fewer responses lost while this program looks away; a lost ACK is asked again anyway. */
	if (setsockopt(peer.fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)))
		setsockopt(peer.fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));

	len = forge_reth_request(read_req, ROCEMU_OP_RC_RDMA_READ_REQUEST, reader.qp->qp_num, PSN_A,
				 (uintptr_t)source, source_mr->rkey, READ_BYTES, 0, 0);
	if (!forge_send(&peer, gid_ipv4(&dev_b.gid), read_req, len))
		goto out;
	/*
	 * The WRITEs follow the READ at once, so the daemon has them before its
	 * first burst of responses is out: their ACK must come long before the
	 * READ's end, whatever the load, and is not lost in a full socket buffer.
	 */
	for (unsigned int i = 0; i < PROBES; i++) {
		len = forge_reth_request(write_req, ROCEMU_OP_RC_RDMA_WRITE_ONLY, writer.qp->qp_num,
					 rocemu_psn_add(PSN_A, i), raddr_of(dst, 0), dst->mr->rkey,
					 PROBE_BYTES, PROBE_BYTES, (uint8_t)i);
		if (!forge_send(&peer, gid_ipv4(&dev_b.gid), write_req, len))
			goto out;
	}
	/* An ACK of the last PSN acknowledges every WRITE before it. */
	if (await_ack(&peer, write_req, len, rocemu_psn_add(PSN_A, PROBES - 1), &reads))
		acked = PROBES;
	after = reads_still_coming(&peer, READS_AFTER);
	check(acked == PROBES && reads + after > 0,
	      "%u of %u WRITEs to another QP ACKed beside the forged READ's responses (%u responses before the ACK, %u%s after it)",
	      acked, PROBES, reads, after,
	      after >= READS_AFTER ? " and more" : "");
	cli_status_answers("while the forged READ streams");
out:
	bufs_free();
	side_close(&writer);
	side_close(&reader);
	forge_close(&peer);
	source_free(source, source_mr);
}

int main(int argc, char **argv)
{
	static const struct named_check checks[] = {
		{ "a READ of 1 GiB under way, the daemon serving everyone else", check_long_read },
		{ "a forged READ of 1 GiB, another QP ACKed meanwhile", check_forged_read },
	};

	return forge_checks_main(argc, argv, checks, sizeof(checks) / sizeof(checks[0]), &peer_addr);
}
