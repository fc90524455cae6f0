/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * RSS: DEVICE_B's RSS QP over an indirection table of 8 WQs hashes
 * IPv4/UDP frames with Toeplitz and the test's key over source and
 * destination address and port; 10000 flows sent from DEVICE_A's raw QP
 * each land in the WQ that the test's own Toeplitz picks (the table entry
 * of the hash's low bits), each completion naming its WQ in qp_num, and
 * every WQ gets some. Then a WQ moved to ERR completes each receive
 * still posted with WR_FLUSH_ERR. Arguments: DEVICE_A DEVICE_B.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <infiniband/verbs.h>

#include "tests/e2e/harness/verbs_pair.h"
#include "tests/e2e/raw/raw_frame.h"
#include "tests/e2e/raw/raw_port.h"

#define WQS 8
#define LOG_WQS 3
#define FLOWS 10000
#define BATCH 32		/* frames in flight: fewer than any WQ holds */
#define WQ_DEPTH 64
#define SLOT 2048

/* The key Microsoft's RSS verification suite and most NICs' defaults use. */
static uint8_t key[40] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0,
	0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30, 0xf2, 0x0c,
	0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

static struct raw_port a;
static struct ibv_cq *cqs[WQS];
static struct ibv_wq *wqs[WQS];
static struct ibv_rwq_ind_table *table;
static struct ibv_qp *rss_qp;
static struct buf *rx;
static uint8_t b_mac[ETH_ALEN];
static uint32_t b_addr;

/* Toeplitz over in (len bytes) with key: each set bit of the input, MSB first, XORs in the key's 32 bits at it. */
static uint32_t toeplitz(const uint8_t *in, size_t len)
{
	uint32_t hash = 0, window = (uint32_t)key[0] << 24 | key[1] << 16 | key[2] << 8 | key[3];

	for (size_t i = 0; i < len; i++)
		for (int bit = 7; bit >= 0; bit--) {
			if (in[i] >> bit & 1)
				hash ^= window;
			window = window << 1 | (key[i + 4] >> bit & 1);
		}
	return hash;
}

/* The reference on the example of Microsoft's RSS verification suite (66.9.149.187:2794 -> 161.142.100.80:1766). */
static void toeplitz_known(void)
{
	const uint8_t in[] = { 66, 9, 149, 187, 161, 142, 100, 80, 0x0a, 0xea, 0x06, 0xe6 };

	check(toeplitz(in, sizeof(in)) == 0x51ccc178, "the test's Toeplitz gives the suite's 0x51ccc178");
}

/* Flow i's fields: source 10.x.y.z and port, to DEVICE_B's address and port 4000 + i % 7. */
static struct frame_desc flow(unsigned int i)
{
	struct frame_desc d = { .saddr = htonl(0x0a000000u | (i * 2654435761u >> 8)), .daddr = b_addr,
				.proto = IPPROTO_UDP, .sport = (uint16_t)(1024 + i * 7919 % 60000),
				.dport = (uint16_t)(4000 + i % 7), .ip_id = (uint16_t)i, .payload = 4 };

	memcpy(d.dst, b_mac, ETH_ALEN);
	memcpy(d.src, a.mac, ETH_ALEN);
	return d;
}

static unsigned int expected_wq(const struct frame_desc *d)
{
	uint8_t in[12];
	uint16_t sport = htons(d->sport), dport = htons(d->dport);

	memcpy(in, &d->saddr, 4);
	memcpy(in + 4, &d->daddr, 4);
	memcpy(in + 8, &sport, 2);
	memcpy(in + 10, &dport, 2);
	return toeplitz(in, sizeof(in)) & (WQS - 1);
}

static bool wq_post(unsigned int w, uint64_t slot)
{
	struct ibv_sge sge = sge_of(rx, (w * WQ_DEPTH + slot) * SLOT, SLOT);
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 }, *bad;
	int err = ibv_post_wq_recv(wqs[w], &wr, &bad);

	if (err)
		check(false, "ibv_post_wq_recv on WQ %u: %s", w, strerror(err));
	return !err;
}

static bool rss_open(void)
{
	struct ibv_device_attr_ex attr;
	struct ibv_rwq_ind_table_init_attr table_attr = { .log_ind_tbl_size = LOG_WQS, .ind_tbl = wqs };
	uint64_t fields = IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4 | IBV_RX_HASH_SRC_PORT_UDP |
			  IBV_RX_HASH_DST_PORT_UDP;
	int err = ibv_query_device_ex(dev_b.ctx, NULL, &attr);

	check(!err && (attr.rss_caps.supported_qpts & (1u << IBV_QPT_RAW_PACKET)) &&
	      (attr.rss_caps.rx_hash_function & IBV_RX_HASH_FUNC_TOEPLITZ) &&
	      (attr.rss_caps.rx_hash_fields_mask & fields) == fields &&
	      attr.rss_caps.max_rwq_indirection_table_size >= WQS,
	      "rss_caps: RAW_PACKET, Toeplitz, IPv4 and UDP fields, tables of %d WQs", WQS);
	memcpy(&b_addr, &dev_b.gid.raw[12], 4);
	b_mac[0] = 0x02;
	memcpy(&b_mac[2], &dev_b.gid.raw[12], 4);
	rx = buf_new(&dev_b, (size_t)WQS * WQ_DEPTH * SLOT, (size_t)WQS * WQ_DEPTH * SLOT, IBV_ACCESS_LOCAL_WRITE,
		     0);
	if (!rx)
		return false;
	for (unsigned int w = 0; w < WQS; w++) {
		struct ibv_wq_attr ready = { .attr_mask = IBV_WQ_ATTR_STATE, .wq_state = IBV_WQS_RDY };

		cqs[w] = ibv_create_cq(dev_b.ctx, WQ_DEPTH, NULL, NULL, 0);
		wqs[w] = cqs[w] ? ibv_create_wq(dev_b.ctx, &(struct ibv_wq_init_attr){
			.wq_type = IBV_WQT_RQ, .max_wr = WQ_DEPTH, .max_sge = 1, .pd = dev_b.pd, .cq = cqs[w] }) : NULL;
		if (!wqs[w] || ibv_modify_wq(wqs[w], &ready)) {
			check(false, "WQ %u created and ready: %s", w, strerror(errno));
			return false;
		}
		for (uint64_t slot = 0; slot < WQ_DEPTH; slot++)
			if (!wq_post(w, slot))
				return false;
	}
	table = ibv_create_rwq_ind_table(dev_b.ctx, &table_attr);
	check(table != NULL, "an indirection table of %d WQs%s%s", WQS, table ? "" : ": ",
	      table ? "" : strerror(errno));
	if (!table)
		return false;
	rss_qp = ibv_create_qp_ex(dev_b.ctx, &(struct ibv_qp_init_attr_ex){
		.qp_type = IBV_QPT_RAW_PACKET,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE | IBV_QP_INIT_ATTR_RX_HASH,
		.pd = dev_b.pd,
		.rwq_ind_tbl = table,
		.rx_hash_conf = { .rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ, .rx_hash_key_len = sizeof(key),
				  .rx_hash_key = key, .rx_hash_fields_mask = fields },
	});
	check(rss_qp != NULL, "an RSS QP over the table, Toeplitz on IPv4 and UDP%s%s", rss_qp ? "" : ": ",
	      rss_qp ? "" : strerror(errno));
	return rss_qp != NULL;
}

/* Completions that named their WQ in qp_num, as mlx5 reports an RSS QP's receives. */
static unsigned int named_wq;

/* The WQ whose CQ holds the next frame, its wr_id in *slot: -1 when none came in time. */
static int next_landing(uint64_t *slot)
{
	struct timespec start;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (elapsed_ms(&start) < RAW_WAIT_MS) {
		for (int w = 0; w < WQS; w++) {
			struct ibv_wc wc;

			if (ibv_poll_cq(cqs[w], 1, &wc) == 1) {
				*slot = wc.wr_id;
				named_wq += wc.qp_num == wqs[w]->wq_num;
				return wc.status == IBV_WC_SUCCESS ? w : -1;
			}
		}
	}
	return -1;
}

static void spread(void)
{
	static uint8_t f[RAW_SLOT];
	unsigned int right = 0, per_wq[WQS] = { 0 }, i = 0, used = 0;

	while (i < FLOWS) {
		unsigned int start = i;

		for (; i < FLOWS && i < start + BATCH; i++) {
			struct frame_desc d = flow(i);
			size_t len = frame_build(f, &d);

			memcpy(f + len - 4, &i, 4);	/* the payload names the flow */
			if (raw_send(&a, f, len, 0) != IBV_WC_SUCCESS) {
				check(false, "flow %u: sent", i);
				return;
			}
		}
		for (unsigned int n = start; n < i; n++) {
			uint64_t slot;
			int w = next_landing(&slot);
			unsigned int id;
			struct frame_desc d;

			if (w < 0) {
				check(false, "flows %u to %u: only %u of them arrived", start, i - 1, n - start);
				return;
			}
			memcpy(&id, rx->p + ((size_t)w * WQ_DEPTH + slot) * SLOT + ETH_HLEN + sizeof(frame_iphdr) +
			       sizeof(frame_udphdr), 4);
			d = flow(id);
			if (id < FLOWS && expected_wq(&d) == (unsigned int)w)
				right++;
			else if (right + 10 > n)
				printf("  flow %u landed in WQ %d, the reference Toeplitz says %u\n", id, w,
				       id < FLOWS ? expected_wq(&d) : 99);
			per_wq[w]++;
			if (!wq_post((unsigned int)w, slot))
				return;
		}
	}
	for (int w = 0; w < WQS; w++)
		used += per_wq[w] > 0;
	check(right == FLOWS, "%u of %u flows landed in the WQ the reference Toeplitz picks", right, FLOWS);
	check(named_wq == FLOWS, "%u of %u completions name their WQ in qp_num", named_wq, FLOWS);
	check(used == WQS, "all %d WQs got flows (%u, %u, %u, %u, %u, %u, %u, %u)", WQS, per_wq[0], per_wq[1],
	      per_wq[2], per_wq[3], per_wq[4], per_wq[5], per_wq[6], per_wq[7]);
}

/* WQ 0 to ERR: each of its WQ_DEPTH receives posted completes once, with WR_FLUSH_ERR. */
static void flush(void)
{
	struct ibv_wq_attr to_err = { .attr_mask = IBV_WQ_ATTR_STATE, .wq_state = IBV_WQS_ERR };
	uint64_t seen = 0;
	unsigned int flushed = 0, wrong = 0;
	struct timespec start;
	struct ibv_wc wc;

	check(ibv_modify_wq(wqs[0], &to_err) == 0, "WQ 0 to ERR");
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (flushed + wrong < WQ_DEPTH && elapsed_ms(&start) < RAW_WAIT_MS)
		if (ibv_poll_cq(cqs[0], 1, &wc) == 1) {
			if (wc.status == IBV_WC_WR_FLUSH_ERR && wc.qp_num == wqs[0]->wq_num &&
			    wc.wr_id < WQ_DEPTH && !(seen >> wc.wr_id & 1)) {
				seen |= 1ull << wc.wr_id;
				flushed++;
			} else {
				wrong++;
			}
		}
	check(flushed == WQ_DEPTH && !wrong,
	      "WQ 0 in ERR: %u of its %d receives flushed, each once (%u other completions)", flushed,
	      WQ_DEPTH, wrong);
}

static void run(void)
{
	struct ibv_flow *to_b = NULL;

	toeplitz_known();
	if (raw_port_open(&a, &dev_a, 0) && rss_open()) {
		to_b = raw_flow_to_mac(rss_qp, b_mac);
		check(to_b != NULL, "a flow to %s's MAC on the RSS QP", dev_b.name);
		if (to_b) {
			spread();
			flush();
		}
	}
	if (to_b)
		ibv_destroy_flow(to_b);
	if (rss_qp)
		ibv_destroy_qp(rss_qp);
	if (table)
		ibv_destroy_rwq_ind_table(table);
	for (int w = 0; w < WQS; w++) {
		if (wqs[w])
			ibv_destroy_wq(wqs[w]);
		if (cqs[w])
			ibv_destroy_cq(cqs[w]);
	}
	raw_port_close(&a);
	bufs_free();
}

int main(int argc, char **argv)
{
	static const struct named_check checks[] = { { "RSS of 10000 flows over 8 WQs", run } };

	return run_checks_main(argc, argv, checks, sizeof(checks) / sizeof(checks[0]));
}
