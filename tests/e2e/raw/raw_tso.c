/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * TSO: one IBV_WR_TSO send of 64 KiB of TCP payload from DEVICE_A's
 * RAW_PACKET QP, cut by mss, arrives at DEVICE_B's raw QP as segments
 * checked byte for byte against the test's model of TSO (a ConnectX's, as
 * Linux's GSO cuts): the headers repeated, IPv4 id one more per segment,
 * total length and checksum of each segment, TCP sequence advanced by the
 * payload before it, FIN and PSH on the last segment alone, CWR on the
 * first alone, TCP checksum over each segment. Headers longer than
 * max_tso_header are refused by ibv_post_send. Arguments: DEVICE_A DEVICE_B.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <infiniband/verbs.h>

#include "tests/e2e/harness/verbs_pair.h"
#include "tests/e2e/raw/raw_frame.h"
#include "tests/e2e/raw/raw_port.h"

#define TSO_BYTES 65536
#define MAX_TSO_HEADER 128
#define HDR_LEN (ETH_HLEN + sizeof(frame_iphdr) + sizeof(frame_tcphdr))

static struct raw_port a, b;

/* The headers of the TSO send: the frame_build of a's segment template, its checksums zero. */
static void tso_headers(uint8_t *hdr, uint8_t flags, uint16_t ip_id, uint32_t seq)
{
	static uint8_t frame[RAW_SLOT];
	struct frame_desc d = { .saddr = a.addr, .daddr = b.addr, .proto = IPPROTO_TCP, .sport = 33000,
				.dport = 80, .ip_id = ip_id, .seq = seq, .tcp_flags = flags };

	memcpy(d.dst, b.mac, ETH_ALEN);
	memcpy(d.src, a.mac, ETH_ALEN);
	frame_build(frame, &d);
	memcpy(hdr, frame, HDR_LEN);
	((frame_iphdr *)(hdr + ETH_HLEN))->check = 0;
	((frame_tcphdr *)(hdr + ETH_HLEN + sizeof(frame_iphdr)))->check = 0;
}

/* Segment i (of n) of the model: headers from hdr, payload from data. Its length. */
static size_t model_segment(uint8_t *seg, const uint8_t *hdr, const uint8_t *data, size_t total,
			    uint16_t mss, size_t i, size_t n)
{
	frame_iphdr *ip = (frame_iphdr *)(seg + ETH_HLEN);
	frame_tcphdr *th = (frame_tcphdr *)(ip + 1);
	size_t off = i * mss, len = total - off < mss ? total - off : mss;

	memcpy(seg, hdr, HDR_LEN);
	memcpy(seg + HDR_LEN, data + off, len);
	ip->tot_len = htons((uint16_t)(sizeof(*ip) + sizeof(*th) + len));
	ip->id = htons((uint16_t)(ntohs(ip->id) + i));
	ip->check = 0;
	ip->check = csum_fold(csum_add(0, ip, sizeof(*ip)));
	th->th_seq = htonl(ntohl(th->th_seq) + (uint32_t)off);
	if (i + 1 < n)
		th->th_flags &= (uint8_t)~(TH_FIN | TH_PUSH);
	if (i > 0)
		th->th_flags &= (uint8_t)~0x80;	/* CWR */
	th->check = 0;
	th->check = l4_csum(ip, th, sizeof(*th) + len);
	return HDR_LEN + len;
}

static void tso_send(uint16_t mss, uint8_t flags)
{
	static uint8_t hdr[HDR_LEN], want[RAW_SLOT], got[RAW_SLOT];
	size_t n = (TSO_BYTES + mss - 1) / mss, right = 0, i;
	struct ibv_sge sge = sge_of(a.tx, 0, TSO_BYTES);
	struct ibv_send_wr wr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_TSO,
				  .send_flags = IBV_SEND_IP_CSUM };
	struct ibv_wc wc;
	int status;

	tso_headers(hdr, flags, 0x4000, 0x10000000u - 1000);	/* the sequence wraps on the way */
	fill_pattern(a.tx->p, TSO_BYTES, mss, 0);
	wr.tso.hdr = hdr;
	wr.tso.hdr_sz = HDR_LEN;
	wr.tso.mss = mss;
	status = raw_post_wait(&a, &wr);
	check(status == IBV_WC_SUCCESS, "TSO of %d bytes, mss %u: the send completes (status %d)", TSO_BYTES,
	      mss, status);
	for (i = 0; i < n; i++) {
		size_t len = model_segment(want, hdr, a.tx->p, TSO_BYTES, mss, i, n);

		if (raw_recv(&b, &wc, NULL, got, RAW_WAIT_MS) != 1) {
			check(false, "TSO, mss %u: segment %zu of %zu never arrived", mss, i + 1, n);
			return;
		}
		if (wc.status == IBV_WC_SUCCESS && wc.byte_len == len && !memcmp(got, want, len)) {
			right++;
			continue;
		}
		for (size_t j = 0; j < len && j < wc.byte_len; j++)
			if (got[j] != want[j]) {
				printf("  segment %zu: byte %zu is 0x%02x, the model's 0x%02x\n", i + 1, j, got[j],
				       want[j]);
				break;
			}
		printf("  segment %zu: status %d, %u bytes, the model's %zu\n", i + 1, wc.status, wc.byte_len, len);
	}
	check(right == n, "TSO, mss %u, flags 0x%02x: %zu of %zu segments are the model's byte for byte", mss,
	      flags, right, n);
	check(raw_recv(&b, &wc, NULL, got, 0) == 0, "TSO, mss %u: no segment more", mss);
}

/* ibv_post_send refuses a TSO WQE whose headers mlx5 cannot take. */
static void tso_refused(size_t hdr_sz, const char *what)
{
	static uint8_t hdr[2 * MAX_TSO_HEADER];
	struct ibv_sge sge = sge_of(a.tx, 0, 4096);
	struct ibv_send_wr wr = { .wr_id = 8, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_TSO,
				  .send_flags = IBV_SEND_SIGNALED | IBV_SEND_IP_CSUM }, *bad = NULL;
	int err;

	tso_headers(hdr, TH_ACK, 1, 1);
	wr.tso.hdr = hdr;
	wr.tso.hdr_sz = (uint16_t)hdr_sz;
	wr.tso.mss = 1000;
	err = ibv_post_send(a.qp, &wr, &bad);
	check(err == EINVAL && bad == &wr, "%s: ibv_post_send refuses it with EINVAL (got %s)", what,
	      err ? strerror(err) : "success");
}

static void run(void)
{
	struct ibv_device_attr_ex attr;
	struct ibv_flow *to_b = NULL;
	int err = ibv_query_device_ex(dev_a.ctx, NULL, &attr);

	check(!err && attr.tso_caps.max_tso >= TSO_BYTES &&
	      (attr.tso_caps.supported_qpts & (1u << IBV_QPT_RAW_PACKET)),
	      "tso_caps: max_tso %u, RAW_PACKET among the QP types", err ? 0 : attr.tso_caps.max_tso);
	if (raw_port_open(&a, &dev_a, MAX_TSO_HEADER) && raw_port_open(&b, &dev_b, 0)) {
		to_b = raw_flow_to_mac(b.qp, b.mac);
		check(to_b != NULL, "a flow to %s's MAC", dev_b.name);
		tso_send(1448, TH_ACK | TH_PUSH);
		tso_send(1000, TH_ACK | TH_PUSH | TH_FIN | 0x80);
		tso_refused(MAX_TSO_HEADER + 2, "headers 2 bytes past max_tso_header");
		tso_refused(ETH_HLEN - 1, "headers shorter than an Ethernet header");
	}
	if (to_b)
		check(ibv_destroy_flow(to_b) == 0, "ibv_destroy_flow");
	raw_port_close(&b);
	raw_port_close(&a);
	bufs_free();
}

int main(int argc, char **argv)
{
	static const struct named_check checks[] = { { "TSO of 64 KiB", run } };

	return run_checks_main(argc, argv, checks, sizeof(checks) / sizeof(checks[0]));
}
