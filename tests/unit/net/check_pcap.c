/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The pcap writer: RoCE packets built with the codecs are written, read
 * back with libpcap and checked byte by byte (Ethernet, IPv4 with its
 * checksum, UDP with its checksum, payload, ICRC over the written headers),
 * then decoded by tshark when it is installed.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "net/roce/icrc.h"
#include "net/observe/pcap.h"
#include "net/observe/pcap_sink.h"
#include "net/roce/roce_hdr.h"
#include "net/udp/udp_port.h"

#define ETH_BYTES 14
#define IP_BYTES 20
#define UDP_BYTES 8
#define FRAME_HDR (ETH_BYTES + IP_BYTES + UDP_BYTES)

struct test_pkt {
	uint8_t opcode;
	uint32_t destqp;
	uint32_t psn;
	size_t paylen;
	uint8_t data[128];
	size_t len;	/* BTH to ICRC */
};

/* BTH (+ RETH / AETH as the opcode wants) + payload + pad + ICRC, built with the codecs. */
static void build_pkt(struct test_pkt *t, const struct rocemu_ipv4_udp *flow)
{
	const struct rocemu_opcode_info *info = rocemu_opcode_info(t->opcode);
	uint8_t *p = t->data, *h;
	size_t len;

	ck_assert_ptr_nonnull(info);
	ck_assert_uint_le(rocemu_pkt_wire_len(info, t->paylen), sizeof(t->data));
	memset(p, 0, sizeof(t->data));
	rocemu_bth_set_opcode(p, t->opcode);
	rocemu_bth_set_padcnt(p, rocemu_pad_bytes(t->paylen));
	rocemu_bth_set_pkey(p, 0xffff);
	rocemu_bth_set_destqp(p, t->destqp);
	rocemu_bth_set_ackreq(p, true);
	rocemu_bth_set_psn(p, t->psn);
	if ((h = rocemu_pkt_reth(p))) {
		rocemu_reth_set_va(h, 0x7f0012345000ull);
		rocemu_reth_set_rkey(h, 0x1208);
		rocemu_reth_set_dma_len(h, (uint32_t)t->paylen);
	}
	if ((h = rocemu_pkt_aeth(p))) {
		rocemu_aeth_set_syndrome(h, rocemu_aeth_syndrome_make(ROCEMU_AETH_ACK,
								       ROCEMU_AETH_CREDITS_INVALID));
		rocemu_aeth_set_msn(h, 1);
	}
	for (size_t i = 0; i < t->paylen; i++)
		p[info->length + i] = (uint8_t)(i * 7 + 1);
	len = info->length + t->paylen + rocemu_pad_bytes(t->paylen);
	t->len = rocemu_icrc_append_v4(flow, p, len, 0);
	ck_assert_uint_eq(t->len, rocemu_pkt_wire_len(info, t->paylen));
}

static struct rocemu_ipv4_udp test_flow(void)
{
	return (struct rocemu_ipv4_udp){ .saddr = inet_addr("10.1.2.3"),
					 .daddr = inet_addr("10.1.2.4"),
					 .sport = htons(0xc123),
					 .dport = htons(ROCEMU_ROCEV2_PORT) };
}

/* A run as the daemon's socket sends it: DF, TTL 64, IDs from 0, stamped now, no spacing. */
static struct rocemu_pcap_run test_run(const struct rocemu_ipv4_udp *flow)
{
	return (struct rocemu_pcap_run){ .flow = flow, .ip = { .df = true, .ttl = 64 } };
}

static struct test_pkt test_pkts[] = {
	{ .opcode = ROCEMU_OP_RC_SEND_ONLY, .destqp = 0x000112, .psn = 100, .paylen = 5 },
	{ .opcode = ROCEMU_OP_RC_RDMA_WRITE_ONLY, .destqp = 0x000113, .psn = 0xfffffe, .paylen = 64 },
	{ .opcode = ROCEMU_OP_RC_ACKNOWLEDGE, .destqp = 0x000114, .psn = 7, .paylen = 0 },
	{ .opcode = ROCEMU_OP_RC_SEND_ONLY_WITH_IMMEDIATE, .destqp = 0xabcdef, .psn = 1, .paylen = 1 },
};
#define NPKTS (sizeof(test_pkts) / sizeof(test_pkts[0]))

static char tmpdir[64];
static char path[128];

static void make_tmpdir(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/check_pcap.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	ck_assert_int_eq(rocemu_pcap_default_path(path, sizeof(path), tmpdir, "rocemu0"), 0);
}

static void remove_tmpdir(void)
{
	unlink(path);
	rmdir(tmpdir);
}

static uint64_t realtime_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000;
}

/* The one's-complement sum of a correctly checksummed block folds to 0xffff. */
static uint16_t ones_sum(uint32_t sum, const uint8_t *p, size_t len)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		sum += rocemu_get_be16(p + i);
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

static void expect_mac(const uint8_t *mac, const char *ip)
{
	uint32_t a = ntohl(inet_addr(ip));
	const uint8_t want[6] = { 0x02, 0x00, a >> 24, a >> 16 & 0xff, a >> 8 & 0xff, a & 0xff };

	ck_assert_mem_eq(mac, want, 6);
}

static void expect_frame(const struct pcap_pkthdr *h, const uint8_t *f, const struct test_pkt *t,
			 const struct rocemu_ipv4_udp *flow)
{
	const uint8_t *ip = f + ETH_BYTES, *udp = ip + IP_BYTES, *pkt = udp + UDP_BYTES;
	struct iphdr ip_hdr;
	struct udphdr udp_hdr;
	uint32_t pseudo, crc;
	uint8_t icrc[4];

	ck_assert_uint_eq(h->caplen, FRAME_HDR + t->len);
	ck_assert_uint_eq(h->len, FRAME_HDR + t->len);
	/* Ethernet II: MACs 02:00:a:b:c:d of the addresses, IPv4. */
	expect_mac(f, "10.1.2.4");
	expect_mac(f + 6, "10.1.2.3");
	ck_assert_uint_eq(rocemu_get_be16(f + 12), 0x0800);
	/* IPv4 as Linux writes it for the daemon's socket. */
	ck_assert_uint_eq(ip[0], 0x45);
	ck_assert_uint_eq(ip[1], 0);
	ck_assert_uint_eq(rocemu_get_be16(ip + 2), IP_BYTES + UDP_BYTES + t->len);
	ck_assert_uint_eq(rocemu_get_be16(ip + 4), 0);
	ck_assert_uint_eq(rocemu_get_be16(ip + 6), 0x4000);
	ck_assert_uint_eq(ip[8], 64);
	ck_assert_uint_eq(ip[9], 17);
	ck_assert_uint_ne(rocemu_get_be16(ip + 10), 0);
	ck_assert_uint_eq(ones_sum(0, ip, IP_BYTES), 0xffff);
	ck_assert_mem_eq(ip + 12, &flow->saddr, 4);
	ck_assert_mem_eq(ip + 16, &flow->daddr, 4);
	/* UDP: ports, length, checksum over the pseudo header. */
	ck_assert_uint_eq(rocemu_get_be16(udp), 0xc123);
	ck_assert_uint_eq(rocemu_get_be16(udp + 2), 4791);
	ck_assert_uint_eq(rocemu_get_be16(udp + 4), UDP_BYTES + t->len);
	ck_assert_uint_ne(rocemu_get_be16(udp + 6), 0);
	pseudo = rocemu_get_be16(ip + 12) + rocemu_get_be16(ip + 14) + rocemu_get_be16(ip + 16) +
		 rocemu_get_be16(ip + 18) + 17 + UDP_BYTES + t->len;
	ck_assert_uint_eq(ones_sum(pseudo, udp, UDP_BYTES + t->len), 0xffff);
	/* The RoCE packet unchanged, and its ICRC right for the headers as written. */
	ck_assert_mem_eq(pkt, t->data, t->len);
	memcpy(&ip_hdr, ip, sizeof(ip_hdr));	/* the frame puts them at odd offsets */
	memcpy(&udp_hdr, udp, sizeof(udp_hdr));
	crc = rocemu_icrc_v4_hdrs(&ip_hdr, &udp_hdr, pkt, t->len - ROCEMU_ICRC_BYTES);
	for (int i = 0; i < 4; i++)
		icrc[i] = (uint8_t)(crc >> (8 * i));	/* least-significant byte first */
	ck_assert_mem_eq(pkt + t->len - 4, icrc, 4);
}

static pcap_t *open_offline(const char *file, uint32_t snaplen)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	pcap_t *in = pcap_open_offline(file, errbuf);

	ck_assert_msg(in, "pcap_open_offline %s: %s", file, errbuf);
	ck_assert_int_eq(pcap_datalink(in), DLT_EN10MB);
	ck_assert_int_eq(pcap_snapshot(in), snaplen);
	return in;
}

static void write_test_pkts(const char *file, uint64_t *t_before, uint64_t *t_after)
{
	struct rocemu_ipv4_udp flow = test_flow();
	const struct rocemu_pcap_run run = test_run(&flow);
	struct rocemu_pcap *p = rocemu_pcap_open(file, 0);

	ck_assert_msg(p, "open %s: %s", file, strerror(errno));
	*t_before = realtime_us();
	for (size_t i = 0; i < NPKTS; i++) {
		build_pkt(&test_pkts[i], &flow);
		ck_assert_int_eq(rocemu_pcap_write(p, &run, test_pkts[i].data, test_pkts[i].len, 0), 0);
	}
	*t_after = realtime_us();
	ck_assert_int_eq(rocemu_pcap_close(p), 0);
}

START_TEST(test_frames_read_back_byte_by_byte)
{
	struct rocemu_ipv4_udp flow = test_flow();
	uint64_t t_before, t_after;
	struct pcap_pkthdr *h;
	const u_char *frame;
	pcap_t *in;

	make_tmpdir();
	write_test_pkts(path, &t_before, &t_after);
	in = open_offline(path, ROCEMU_PCAP_SNAPLEN_MAX);
	for (size_t i = 0; i < NPKTS; i++) {
		uint64_t ts;

		ck_assert_int_eq(pcap_next_ex(in, &h, &frame), 1);
		ts = (uint64_t)h->ts.tv_sec * 1000000u + (uint64_t)h->ts.tv_usec;
		ck_assert_uint_ge(ts, t_before);
		ck_assert_uint_le(ts, t_after);
		ck_assert_int_eq(rocemu_icrc_check_v4(&flow, frame + FRAME_HDR, test_pkts[i].len, NULL), 0);
		expect_frame(h, frame, &test_pkts[i], &flow);
	}
	ck_assert_int_eq(pcap_next_ex(in, &h, &frame), PCAP_ERROR_BREAK);
	pcap_close(in);
	remove_tmpdir();
}
END_TEST

/* The file's size once the writer process caught up (it writes on its own time). */
static off_t size_reached(off_t want)
{
	struct stat st = { 0 };

	/* A bound against a hang only: the writer needs microseconds. */
	for (int i = 0; i < 30000; i++) {
		ck_assert_int_eq(stat(path, &st), 0);
		if (st.st_size >= want)
			break;
		usleep(1000);
	}
	return st.st_size;
}

/* The first write is handed to the file at once; later ones at the latest on flush or close. */
START_TEST(test_flush_policy)
{
	struct rocemu_ipv4_udp flow = test_flow();
	const struct rocemu_pcap_run run = test_run(&flow);
	struct rocemu_pcap *p;
	struct stat st;
	const off_t file_hdr = 24, rec_hdr = 16;
	off_t rec;

	make_tmpdir();
	build_pkt(&test_pkts[0], &flow);
	rec = rec_hdr + FRAME_HDR + (off_t)test_pkts[0].len;
	p = rocemu_pcap_open(path, 0);
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(rocemu_pcap_write(p, &run, test_pkts[0].data, test_pkts[0].len, 0), 0);
	ck_assert_int_eq(size_reached(file_hdr + rec), file_hdr + rec);
	ck_assert_int_eq(rocemu_pcap_write(p, &run, test_pkts[0].data, test_pkts[0].len, 0), 0);
	ck_assert_int_eq(rocemu_pcap_flush(p), 0);
	ck_assert_int_eq(size_reached(file_hdr + 2 * rec), file_hdr + 2 * rec);
	ck_assert_int_eq(rocemu_pcap_write(p, &run, test_pkts[0].data, test_pkts[0].len, 0), 0);
	ck_assert_int_eq(rocemu_pcap_close(p), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_size, file_hdr + 3 * rec);
	remove_tmpdir();
}
END_TEST

START_TEST(test_largest_datagram_and_errors)
{
	struct rocemu_ipv4_udp flow = test_flow();
	const struct rocemu_pcap_run run = test_run(&flow);
	struct rocemu_pcap_run noflow = run;
	static uint8_t big[65508];
	struct pcap_pkthdr *h;
	const u_char *frame;
	struct rocemu_pcap *p;
	pcap_t *in;

	make_tmpdir();
	p = rocemu_pcap_open(path, 0);
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(rocemu_pcap_write(p, &run, big, sizeof(big), 0), -EMSGSIZE);
	ck_assert_int_eq(rocemu_pcap_write(p, NULL, big, 1, 0), -EINVAL);
	noflow.flow = NULL;
	ck_assert_int_eq(rocemu_pcap_write(p, &noflow, big, 1, 0), -EINVAL);
	ck_assert_int_eq(rocemu_pcap_write(p, &run, NULL, 1, 0), -EINVAL);
	/* 65507 bytes: the largest frame, whole with snap length 0. */
	ck_assert_int_eq(rocemu_pcap_write(p, &run, big, sizeof(big) - 1, 0), 0);
	ck_assert_int_eq(rocemu_pcap_close(p), 0);
	in = open_offline(path, ROCEMU_PCAP_SNAPLEN_MAX);
	ck_assert_int_eq(pcap_next_ex(in, &h, &frame), 1);
	ck_assert_uint_eq(h->len, FRAME_HDR + 65507);
	ck_assert_uint_eq(h->caplen, FRAME_HDR + 65507);
	ck_assert_uint_eq(rocemu_get_be16(frame + ETH_BYTES + 2), 65535);
	pcap_close(in);
	remove_tmpdir();

	errno = 0;
	ck_assert_ptr_null(rocemu_pcap_open("/nonexistent-dir/x.pcap", 0));
	ck_assert_int_eq(errno, ENOENT);
	errno = 0;
	ck_assert_ptr_null(rocemu_pcap_open(path, ROCEMU_PCAP_SNAPLEN_MAX + 1));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(rocemu_pcap_close(NULL), 0);
}
END_TEST

/*
 * A record cut at the snap length is the first bytes of the whole frame but
 * for its UDP checksum, 0 (none), and says the whole length; a run of
 * segments is one record each, the IPv4 ID one more each (as the kernel
 * numbers GSO segments), each stamped when the one before it has passed.
 */
START_TEST(test_snaplen_cuts_records)
{
	const uint32_t snaplen = FRAME_HDR + 20;
	struct rocemu_ipv4_udp flow = test_flow();
	const struct rocemu_pcap_run run = test_run(&flow);
	struct test_pkt *t = &test_pkts[1];
	uint8_t whole[FRAME_HDR + sizeof(t->data)], segs[3 * sizeof(t->data)];
	struct rocemu_pcap_run spaced = run;
	struct pcap_pkthdr *h;
	const u_char *frame;
	struct rocemu_pcap *p;
	struct timeval first;
	pcap_t *in;

	make_tmpdir();
	build_pkt(t, &flow);
	ck_assert_uint_gt(t->len, snaplen - FRAME_HDR);
	p = rocemu_pcap_open(path, 0);
	ck_assert_int_eq(rocemu_pcap_write(p, &run, t->data, t->len, 0), 0);
	ck_assert_int_eq(rocemu_pcap_close(p), 0);
	in = open_offline(path, ROCEMU_PCAP_SNAPLEN_MAX);
	ck_assert_int_eq(pcap_next_ex(in, &h, &frame), 1);
	memcpy(whole, frame, h->caplen);
	pcap_close(in);
	memset(whole + FRAME_HDR - 2, 0, 2);

	for (size_t i = 0; i < 3; i++)
		memcpy(segs + i * t->len, t->data, t->len);
	/* 1 ns a bit: the first two frames are 1000 bits apart at least, a microsecond. */
	spaced.ns = 1700000000ull * 1000000000u;
	spaced.bit_ps = 1000;
	p = rocemu_pcap_open(path, snaplen);
	ck_assert_int_eq(rocemu_pcap_write(p, &spaced, segs, 3 * t->len - 1, t->len), 0);
	ck_assert_int_eq(rocemu_pcap_close(p), 0);
	in = open_offline(path, snaplen);
	for (size_t i = 0; i < 3; i++) {
		ck_assert_int_eq(pcap_next_ex(in, &h, &frame), 1);
		ck_assert_uint_eq(h->caplen, snaplen);
		ck_assert_uint_eq(h->len, FRAME_HDR + t->len - (i == 2));
		/* The same frame but for its IPv4 ID and so header checksum. */
		ck_assert_uint_eq(rocemu_get_be16(frame + ETH_BYTES + 4), i);
		ck_assert_uint_eq(ones_sum(0, frame + ETH_BYTES, IP_BYTES), 0xffff);
		if (i < 2) {
			ck_assert_mem_eq(frame, whole, ETH_BYTES + 4);
			ck_assert_mem_eq(frame + ETH_BYTES + 6, whole + ETH_BYTES + 6, 4);
			ck_assert_mem_eq(frame + ETH_BYTES + 12, whole + ETH_BYTES + 12,
					 snaplen - ETH_BYTES - 12);
		}
		ck_assert_int_eq(h->ts.tv_sec, 1700000000);
		ck_assert_int_eq(h->ts.tv_usec, (long)(i * rocemu_pcap_frame_ps(t->len, 1000) /
						       1000000));
		if (i)
			ck_assert_int_gt(h->ts.tv_usec, first.tv_usec);
		first = h->ts;
	}
	ck_assert_int_eq(pcap_next_ex(in, &h, &frame), PCAP_ERROR_BREAK);
	pcap_close(in);
	remove_tmpdir();
}
END_TEST

START_TEST(test_snaplen_parse)
{
	static const char *const bad[] = { "", "-1", "+5", " 5", "5 ", "12a", "0x80", "262145",
					   "99999999999999999999999" };
	uint32_t v = 7;

	ck_assert_int_eq(rocemu_pcap_snaplen_parse("0", &v), 0);
	ck_assert_uint_eq(v, 0);
	ck_assert_int_eq(rocemu_pcap_snaplen_parse("128", &v), 0);
	ck_assert_uint_eq(v, 128);
	ck_assert_int_eq(rocemu_pcap_snaplen_parse("262144", &v), 0);
	ck_assert_uint_eq(v, ROCEMU_PCAP_SNAPLEN_MAX);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = 7;
		ck_assert_int_eq(rocemu_pcap_snaplen_parse(bad[i], &v), -EINVAL);
		ck_assert_uint_eq(v, 7);
	}
	ck_assert_int_eq(rocemu_pcap_snaplen_parse(NULL, &v), -EINVAL);
}
END_TEST

START_TEST(test_default_path)
{
	char buf[32];

	ck_assert_int_eq(rocemu_pcap_default_path(buf, sizeof(buf), "/run/rocemu", "rocemu1"), 0);
	ck_assert_str_eq(buf, "/run/rocemu/rocemu1.pcap");
	ck_assert_int_eq(rocemu_pcap_default_path(buf, 24, "/run/rocemu", "rocemu1"),
			 -ENAMETOOLONG);
	ck_assert_str_eq(buf, "");
	ck_assert_int_eq(rocemu_pcap_default_path(buf, sizeof(buf), NULL, "x"), -EINVAL);
}
END_TEST

/* ---- tshark: decodes as InfiniBand BTH with no expert or malformed note ---- */

static int have_tshark(void)
{
	return system("command -v tshark >/dev/null 2>&1") == 0;
}

START_TEST(test_tshark_decodes_roce)
{
	uint64_t t_before, t_after;
	char cmd[512], line[512];
	size_t n = 0;
	FILE *out;

	if (!have_tshark()) {
		printf("tshark is not installed: skipping the decode check\n");
		return;
	}
	make_tmpdir();
	write_test_pkts(path, &t_before, &t_after);
	/*
	 * Checksum validation is off by default in Wireshark; turn it on for IPv4
	 * and UDP. The RPC-over-RDMA heuristic guesses at every SEND payload and
	 * reads past short ones (Wireshark 4.0 flags a 5-byte send "Malformed
	 * RPCoRDMA"): off, since these payloads are not RPC.
	 */
	snprintf(cmd, sizeof(cmd),
		 "tshark -n -r %s -o ip.check_checksum:TRUE -o udp.check_checksum:TRUE "
		 "--disable-heuristic rpcrdma_infiniband "
		 "-T fields -E separator=/t -E occurrence=a "
		 "-e ip.src -e udp.dstport -e infiniband.bth.opcode -e infiniband.bth.destqp "
		 "-e infiniband.bth.psn -e ip.checksum.status -e udp.checksum.status "
		 "-e frame.protocols -e _ws.expert -e _ws.malformed 2>/dev/null",
		 path);
	out = popen(cmd, "r");
	ck_assert_ptr_nonnull(out);
	while (fgets(line, sizeof(line), out)) {
		const struct test_pkt *t = &test_pkts[n];
		char want[256];

		ck_assert_uint_lt(n, NPKTS);
		line[strcspn(line, "\n")] = '\0';
		snprintf(want, sizeof(want),
			 "10.1.2.3\t4791\t%u\t0x%06x\t%u\t1\t1\teth:ethertype:ip:udp:infiniband%s\t\t",
			 t->opcode, t->destqp, t->psn, t->paylen ? ":data" : "");
		ck_assert_msg(!strcmp(line, want), "packet %zu: tshark says\n  \"%s\"\nexpected\n  \"%s\"",
			      n, line, want);
		n++;
	}
	ck_assert_int_eq(pclose(out), 0);
	ck_assert_uint_eq(n, NPKTS);
	remove_tmpdir();
}
END_TEST

/*
 * What a daemon killed in the middle of handing over a batch leaves: the
 * writer process writes the whole records it got and drops the cut one.
 */
START_TEST(test_sink_drops_a_cut_record)
{
	uint8_t rec[3][16 + 40];
	pid_t pid;
	struct stat st;
	int fd, pipe_fd;

	make_tmpdir();
	memset(rec, 0xab, sizeof(rec));
	for (int i = 0; i < 3; i++) {
		uint32_t caplen = 40, len = 40;

		memcpy(&rec[i][8], &caplen, sizeof(caplen));
		memcpy(&rec[i][12], &len, sizeof(len));
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ck_assert_int_ge(fd, 0);
	pipe_fd = rocemu_pcap_sink_start(fd, NULL, 0, &pid);
	ck_assert_int_ge(pipe_fd, 0);
	/* Two whole records, then the third cut inside its data, then the daemon is gone. */
	ck_assert_int_eq(write(pipe_fd, rec, sizeof(rec[0]) * 2 + 30), (ssize_t)sizeof(rec[0]) * 2 + 30);
	ck_assert_int_eq(rocemu_pcap_sink_stop(pipe_fd, pid), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_size, 2 * sizeof(rec[0]));
	remove_tmpdir();
}
END_TEST

static Suite *pcap_suite(void)
{
	Suite *s = suite_create("pcap");
	TCase *tc = tcase_create("writer");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_frames_read_back_byte_by_byte);
	tcase_add_test(tc, test_flush_policy);
	tcase_add_test(tc, test_sink_drops_a_cut_record);
	tcase_add_test(tc, test_largest_datagram_and_errors);
	tcase_add_test(tc, test_snaplen_cuts_records);
	tcase_add_test(tc, test_snaplen_parse);
	tcase_add_test(tc, test_default_path);
	tcase_add_test(tc, test_tshark_decodes_roce);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(pcap_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
