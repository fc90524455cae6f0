/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The taps on a device's traffic (emulator/observe/), on the fixture's
 * emulator: the capture file (capture.c) and its records of packets sent
 * and received; the received side's counting, capture times and the
 * ROCEMU_FAULTS and ROCEMU_PCAP start (tap.c); fault injection on real
 * UDP sockets, drops and duplicates exactly as configured, and its totals
 * across configurations (fault_inject.c); the counters of `rocemu stats`
 * moving with the packets (stats.c); and the lines of `rocemu trace` for
 * packets and CQEs, with their filters (trace.c).
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emulator/ctrl/emu_life.h"
#include "emulator/observe/capture.h"
#include "emulator/observe/fault_inject.h"
#include "emulator/observe/stats.h"
#include "emulator/observe/tap.h"
#include "emulator/observe/trace.h"
#include "net/roce/roce_opcode.h"
#include "net/udp/udp_port.h"
#include "tests/unit/fixture.h"

#define PCAP_MAGIC_NS 0xa1b23c4du
#define PCAP_FILE_HDR 24
#define PCAP_REC_HDR 16
#define ETH_HDR 14
#define IPV4_HDR 20
#define UDP_HDR 8
#define FRAME_HDRS (ETH_HDR + IPV4_HDR + UDP_HDR)

static char tmpdir[64];

static void observe_setup(void)
{
	fx_setup();
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/rocemu-observe-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void observe_teardown(void)
{
	char cmd[96];

	fx_teardown();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	ck_assert_int_eq(system(cmd), 0);
}

static const char *tmp_path(const char *name)
{
	static char path[2][128];
	static int next;
	char *p = path[next++ % 2];

	snprintf(p, sizeof(path[0]), "%s/%s", tmpdir, name);
	return p;
}

static uint16_t post_send(uint32_t len)
{
	const struct ibv_sge sge = { .addr = (uintptr_t)fx.buf, .length = len, .lkey = fx.lkey };
	const struct fx_wr wr = { .opcode = MLX5_OPCODE_SEND, .flags = MLX5_WQE_CTRL_CQ_UPDATE,
				  .sge = &sge, .num_sge = 1 };

	for (uint32_t i = 0; i < len; i++)
		fx.buf[i] = (uint8_t)(i * 13 + 1);
	return fx_post_send(&wr);
}

/* ---- a pcap file read back ---- */

struct pcap_rec {
	uint64_t ns;
	uint32_t caplen, len;
	const uint8_t *frame;
};

struct pcap_file {
	uint8_t *bytes;
	size_t size;
	uint32_t snaplen;
	unsigned int nrec;
	struct pcap_rec rec[16];
};

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint16_t rd16be(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* Read the whole file; check its header (ns times, version 2.4, Ethernet) and split its records. */
static void pcap_read(const char *path, struct pcap_file *f)
{
	FILE *in = fopen(path, "rb");
	size_t at;

	ck_assert_msg(in != NULL, "%s: %s", path, strerror(errno));
	memset(f, 0, sizeof(*f));
	f->bytes = malloc(1 << 20);
	ck_assert_ptr_nonnull(f->bytes);
	f->size = fread(f->bytes, 1, 1 << 20, in);
	fclose(in);
	ck_assert_uint_ge(f->size, PCAP_FILE_HDR);
	ck_assert_uint_eq(rd32(f->bytes), PCAP_MAGIC_NS);
	ck_assert_uint_eq(f->bytes[4] | f->bytes[5] << 8, 2);
	ck_assert_uint_eq(f->bytes[6] | f->bytes[7] << 8, 4);
	f->snaplen = rd32(f->bytes + 16);
	ck_assert_uint_eq(rd32(f->bytes + 20), 1);	/* LINKTYPE_ETHERNET */
	for (at = PCAP_FILE_HDR; at < f->size; f->nrec++) {
		struct pcap_rec *r = &f->rec[f->nrec];

		ck_assert_uint_lt(f->nrec, sizeof(f->rec) / sizeof(f->rec[0]));
		ck_assert_uint_le(at + PCAP_REC_HDR, f->size);
		r->ns = (uint64_t)rd32(f->bytes + at) * 1000000000ull + rd32(f->bytes + at + 4);
		r->caplen = rd32(f->bytes + at + 8);
		r->len = rd32(f->bytes + at + 12);
		r->frame = f->bytes + at + PCAP_REC_HDR;
		ck_assert_uint_le(r->caplen, r->len);
		at += PCAP_REC_HDR + r->caplen;
		ck_assert_uint_le(at, f->size);
	}
}

/* Record r is the whole frame of UDP payload pkt[0, len) from saddr to daddr, RoCEv2's port. */
static void expect_frame(const struct pcap_rec *r, const char *saddr, const char *daddr,
			 const uint8_t *pkt, size_t len)
{
	const uint8_t *ip = r->frame + ETH_HDR, *udp = ip + IPV4_HDR;

	ck_assert_uint_eq(r->len, FRAME_HDRS + len);
	ck_assert_uint_eq(r->caplen, r->len);
	ck_assert_uint_eq(rd16be(r->frame + 12), 0x0800);
	ck_assert_uint_eq(ip[9], IPPROTO_UDP);
	ck_assert_uint_eq(rd32(ip + 12), inet_addr(saddr));
	ck_assert_uint_eq(rd32(ip + 16), inet_addr(daddr));
	ck_assert_uint_eq(rd16be(udp + 2), ROCEMU_ROCEV2_PORT);
	ck_assert_uint_eq(rd16be(udp + 4), UDP_HDR + len);
	ck_assert_mem_eq(udp + UDP_HDR, pkt, len);
}

/* ---- capture.c ---- */

START_TEST(test_capture_snaplen_from_env)
{
	char err[256] = "";

	unsetenv("ROCEMU_PCAP_SNAPLEN");
	ck_assert_int_eq(rocemu_capture_configure(&fx.emu, err, sizeof(err)), 0);
	ck_assert_uint_eq(fx.emu.pcap_snaplen, ROCEMU_PCAP_SNAPLEN_DEFAULT);
	setenv("ROCEMU_PCAP_SNAPLEN", "0", 1);
	ck_assert_int_eq(rocemu_capture_configure(&fx.emu, err, sizeof(err)), 0);
	ck_assert_uint_eq(fx.emu.pcap_snaplen, 0);
	setenv("ROCEMU_PCAP_SNAPLEN", "96", 1);
	ck_assert_int_eq(rocemu_capture_configure(&fx.emu, err, sizeof(err)), 0);
	ck_assert_uint_eq(fx.emu.pcap_snaplen, 96);
	setenv("ROCEMU_PCAP_SNAPLEN", "96k", 1);
	ck_assert_int_eq(rocemu_capture_configure(&fx.emu, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "ROCEMU_PCAP_SNAPLEN: '96k' is not a snap length"));
	setenv("ROCEMU_PCAP_SNAPLEN", "-1", 1);
	ck_assert_int_eq(rocemu_capture_configure(&fx.emu, err, sizeof(err)), -EINVAL);
	unsetenv("ROCEMU_PCAP_SNAPLEN");
}
END_TEST

START_TEST(test_capture_refusals)
{
	char err[PATH_MAX + 64] = "", path[PATH_MAX + 8];

	memset(path, 'p', sizeof(path) - 1);
	path[0] = '/';
	path[sizeof(path) - 1] = '\0';
	ck_assert_int_eq(rocemu_capture_start(fx.dev, path, err, sizeof(err)), -ENAMETOOLONG);
	ck_assert_int_eq(rocemu_capture_start(fx.dev, tmp_path("none/x.pcap"), err, sizeof(err)),
			 -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "cannot write"));
	ck_assert_ptr_null(rocemu_capture_path(fx.dev));
	ck_assert_int_eq(rocemu_capture_start(fx.dev, tmp_path("a.pcap"), err, sizeof(err)), 0);
	ck_assert_str_eq(rocemu_capture_path(fx.dev), tmp_path("a.pcap"));
	/* One capture per device: the second is refused, naming the first. */
	ck_assert_int_eq(rocemu_capture_start(fx.dev, tmp_path("b.pcap"), err, sizeof(err)), -EBUSY);
	ck_assert_ptr_nonnull(strstr(err, "rocemu0 already captures to "));
	ck_assert_ptr_nonnull(strstr(err, tmp_path("a.pcap")));
	ck_assert_int_eq(access(tmp_path("b.pcap"), F_OK), -1);
	rocemu_capture_stop(fx.dev);
	ck_assert_ptr_null(rocemu_capture_path(fx.dev));
	/* Stopping twice is harmless. */
	rocemu_capture_stop(fx.dev);
}
END_TEST

/* A SEND that leaves and the ACK that comes: two whole frames with the wire's bytes, in order. */
START_TEST(test_capture_records)
{
	const struct fx_hdrs ack = { .psn = FX_SQ_PSN, .msn = 1 };
	struct pcap_file f;
	struct fx_pkt in;
	char err[256];

	fx.emu.pcap_snaplen = 0;	/* whole frames */
	ck_assert_int_eq(rocemu_capture_start(fx.dev, tmp_path("c.pcap"), err, sizeof(err)), 0);
	post_send(100);
	fx_doorbell();
	ck_assert_uint_eq(fx.nwire, 1);
	fx_pkt_build(&in, ROCEMU_OP_RC_ACKNOWLEDGE, &ack, NULL, 0);
	fx_rx(&in);
	rocemu_capture_stop(fx.dev);
	pcap_read(tmp_path("c.pcap"), &f);
	ck_assert_uint_eq(f.snaplen, ROCEMU_PCAP_SNAPLEN_MAX);
	ck_assert_uint_eq(f.nrec, 2);
	expect_frame(&f.rec[0], FX_DEV_IP, FX_PEER_IP, fx.wire[0].data, fx.wire[0].len);
	ck_assert_uint_eq(rd16be(f.rec[0].frame + FRAME_HDRS - UDP_HDR),
			  ntohs(fx.wire[0].flow.sport));
	expect_frame(&f.rec[1], FX_PEER_IP, FX_DEV_IP, in.data, in.len);
	ck_assert_uint_eq(rd16be(f.rec[1].frame + FRAME_HDRS - UDP_HDR), FX_PEER_SPORT);
	ck_assert_uint_ge(f.rec[1].ns, f.rec[0].ns);
	free(f.bytes);
}
END_TEST

/* Cut at the snap length: the record says the whole frame's length, keeps its first bytes. */
START_TEST(test_capture_snaplen_cuts)
{
	struct pcap_file f;
	char err[256];

	fx.emu.pcap_snaplen = 96;
	ck_assert_int_eq(rocemu_capture_start(fx.dev, tmp_path("s.pcap"), err, sizeof(err)), 0);
	post_send(FX_MTU_BYTES);
	fx_doorbell();
	rocemu_capture_stop(fx.dev);
	pcap_read(tmp_path("s.pcap"), &f);
	ck_assert_uint_eq(f.snaplen, 96);
	ck_assert_uint_eq(f.nrec, 1);
	ck_assert_uint_eq(f.rec[0].caplen, 96);
	ck_assert_uint_eq(f.rec[0].len, FRAME_HDRS + fx.wire[0].len);
	ck_assert_mem_eq(f.rec[0].frame + FRAME_HDRS, fx.wire[0].data, 96 - FRAME_HDRS);
	free(f.bytes);
}
END_TEST

/* ---- tap.c ---- */

/* A received datagram is counted in packets and 4-byte words, and captured at its arrival time. */
START_TEST(test_tap_rx_counts_and_times)
{
	const struct fx_hdrs ack = { .psn = FX_SQ_PSN };
	const struct rocemu_ipv4_fields ip = { .id = 0x1234, .ttl = 61, .df = true };
	const uint64_t rx_ns = 1700000000ull * 1000000000ull + 123456789ull;
	struct rocemu_dgram d = { .rx_ns = rx_ns, .seg = 2, .udp_check_zero = true };
	struct pcap_file f;
	struct fx_pkt in;
	char err[256];

	fx_pkt_build(&in, ROCEMU_OP_RC_ACKNOWLEDGE, &ack, NULL, 0);
	d.data = in.data;
	d.len = in.len;
	d.src = (struct sockaddr_in){ .sin_family = AF_INET, .sin_port = htons(FX_PEER_SPORT),
				      .sin_addr.s_addr = inet_addr(FX_PEER_IP) };
	rocemu_tap_rx(fx.dev, fx.dev->ipv4, &d, &ip);
	ck_assert_uint_eq(fx.dev->counters.port_rcv_packets, 1);
	ck_assert_uint_eq(fx.dev->counters.port_rcv_data, in.len / ROCEMU_PORT_DATA_WORD);
	fx.emu.pcap_snaplen = 0;
	ck_assert_int_eq(rocemu_capture_start(fx.dev, tmp_path("t.pcap"), err, sizeof(err)), 0);
	rocemu_tap_rx(fx.dev, fx.dev->ipv4, &d, &ip);
	ck_assert_uint_eq(fx.dev->counters.port_rcv_packets, 2);
	rocemu_capture_stop(fx.dev);
	pcap_read(tmp_path("t.pcap"), &f);
	ck_assert_uint_eq(f.nrec, 1);
	expect_frame(&f.rec[0], FX_PEER_IP, FX_DEV_IP, in.data, in.len);
	/* Third of its GRO batch: two packets' time on the port after the batch arrived. */
	ck_assert_uint_eq(f.rec[0].ns, rx_ns + 2 * rocemu_capture_packet_ps(in.len) / 1000);
	/* The IPv4 fields it came with, and the UDP checksum 0 it had. */
	ck_assert_uint_eq(rd16be(f.rec[0].frame + ETH_HDR + 4), 0x1234);
	ck_assert_uint_eq(f.rec[0].frame[ETH_HDR + 8], 61);
	ck_assert_uint_eq(rd16be(f.rec[0].frame + FRAME_HDRS - 2), 0);
	free(f.bytes);
}
END_TEST

START_TEST(test_tap_start_from_env)
{
	char err[256] = "";
	struct stat st;

	setenv("ROCEMU_FAULTS", "drop=0.5,seed=11", 1);
	setenv("ROCEMU_PCAP", tmp_path("pcaps"), 1);
	unsetenv("ROCEMU_PCAP_SNAPLEN");
	ck_assert_int_eq(rocemu_tap_start(&fx.emu, err, sizeof(err)), 0);
	/* The directory is made, mode 0700, and the device captures to <dir>/<dev>.pcap. */
	ck_assert_int_eq(stat(tmp_path("pcaps"), &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0700);
	ck_assert_str_eq(rocemu_capture_path(fx.dev), tmp_path("pcaps/rocemu0.pcap"));
	ck_assert_ptr_nonnull(fx.dev->fault);
	ck_assert(rocemu_fault_config(fx.dev->fault)->drop == 0.5);
	ck_assert_uint_eq(rocemu_fault_config(fx.dev->fault)->seed, 11);
	rocemu_tap_stop(fx.dev);
	ck_assert_ptr_null(fx.dev->fault);
	ck_assert_ptr_null(rocemu_capture_path(fx.dev));
	ck_assert_int_eq(stat(tmp_path("pcaps/rocemu0.pcap"), &st), 0);
	ck_assert_uint_eq(st.st_size, PCAP_FILE_HDR);
	unsetenv("ROCEMU_FAULTS");
	unsetenv("ROCEMU_PCAP");
}
END_TEST

START_TEST(test_tap_start_refusals)
{
	char err[256] = "";

	unsetenv("ROCEMU_PCAP");
	setenv("ROCEMU_FAULTS", "drop=1.5", 1);
	ck_assert_int_eq(rocemu_tap_start(&fx.emu, err, sizeof(err)), -EINVAL);
	ck_assert_msg(!strncmp(err, "ROCEMU_FAULTS: ", 15), "%s", err);
	ck_assert_ptr_null(fx.dev->fault);
	unsetenv("ROCEMU_FAULTS");
	setenv("ROCEMU_PCAP", tmp_path("none/pcaps"), 1);
	ck_assert_int_eq(rocemu_tap_start(&fx.emu, err, sizeof(err)), -ENOENT);
	ck_assert_msg(!strncmp(err, "ROCEMU_PCAP: cannot create ", 27), "%s", err);
	ck_assert_ptr_null(rocemu_capture_path(fx.dev));
	unsetenv("ROCEMU_PCAP");
	setenv("ROCEMU_PCAP_SNAPLEN", "lots", 1);
	ck_assert_int_eq(rocemu_tap_start(&fx.emu, err, sizeof(err)), -EINVAL);
	unsetenv("ROCEMU_PCAP_SNAPLEN");
	/* Nothing asked for, nothing started. */
	ck_assert_int_eq(rocemu_tap_start(&fx.emu, err, sizeof(err)), 0);
	ck_assert_ptr_null(fx.dev->fault);
	ck_assert_ptr_null(rocemu_capture_path(fx.dev));
}
END_TEST

/* ---- fault_inject.c, on real UDP sockets ---- */

static int udp_socket(struct sockaddr_in *addr)
{
	socklen_t len = sizeof(*addr);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	ck_assert_int_ge(fd, 0);
	*addr = (struct sockaddr_in){ .sin_family = AF_INET,
				      .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	ck_assert_int_eq(bind(fd, (struct sockaddr *)addr, sizeof(*addr)), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)addr, &len), 0);
	return fd;
}

/* Datagrams waiting at fd; each one's first byte noted in seen (its number). */
static unsigned int drain(int fd, unsigned int *seen, size_t nseen)
{
	uint8_t buf[256];
	unsigned int n = 0;
	ssize_t got;

	while ((got = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
		ck_assert_int_eq(got, 64);
		if (seen && buf[0] < nseen)
			seen[buf[0]]++;
		n++;
	}
	return n;
}

/* Send count numbered 64-byte datagrams from tx to dst through the device's injector. */
static void send_numbered(int tx, const struct sockaddr_in *dst, unsigned int first,
			  unsigned int count)
{
	uint8_t pkt[64];

	for (unsigned int i = first; i < first + count; i++) {
		memset(pkt, 0x5a, sizeof(pkt));
		pkt[0] = (uint8_t)i;
		ck_assert_int_eq(rocemu_fault_inject_send(fx.dev, tx, dst, pkt, sizeof(pkt)), 0);
	}
	fx_turn();	/* the loop sends what it queued */
}

static void faults(const char *spec)
{
	char err[256] = "";

	ck_assert_msg(rocemu_fault_inject_set(fx.dev, spec, err, sizeof(err)) == 0, "%s: %s", spec,
		      err);
}

START_TEST(test_fault_set_refused)
{
	char err[256] = "";

	ck_assert_int_eq(rocemu_fault_inject_set(fx.dev, "drop=2", err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "drop"));
	ck_assert_int_eq(rocemu_fault_inject_set(fx.dev, "jitter=1", err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "jitter"));
	ck_assert_ptr_null(fx.dev->fault);
	/* A refused spec keeps the injector that runs. */
	faults("dup=0.5");
	ck_assert_int_eq(rocemu_fault_inject_set(fx.dev, "dup=x", err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(fx.dev->fault);
	ck_assert(rocemu_fault_config(fx.dev->fault)->dup == 0.5);
	/* "off", "" and rates of 0 inject nothing: no injector at all. */
	faults("off");
	ck_assert_ptr_null(fx.dev->fault);
	faults("drop=0,seed=4");
	ck_assert_ptr_null(fx.dev->fault);
}
END_TEST

START_TEST(test_fault_drop_and_dup_exactly)
{
	struct sockaddr_in tx_addr, rx_addr;
	int tx = udp_socket(&tx_addr), rx = udp_socket(&rx_addr);
	unsigned int seen[8] = { 0 };
	struct rocemu_fault_counters k;

	faults("drop=1");
	send_numbered(tx, &rx_addr, 0, 5);
	ck_assert_uint_eq(drain(rx, NULL, 0), 0);
	k = rocemu_fault_inject_totals(fx.dev);
	ck_assert_uint_eq(k.dropped, 5);
	faults("dup=1");
	send_numbered(tx, &rx_addr, 0, 3);
	ck_assert_uint_eq(drain(rx, seen, 8), 6);
	ck_assert_uint_eq(seen[0], 2);
	ck_assert_uint_eq(seen[1], 2);
	ck_assert_uint_eq(seen[2], 2);
	/* The totals keep what the replaced injector did. */
	k = rocemu_fault_inject_totals(fx.dev);
	ck_assert_uint_eq(k.dropped, 5);
	ck_assert_uint_eq(k.duplicated, 3);
	ck_assert_uint_eq(k.corrupted + k.reordered + k.delayed, 0);
	faults("off");
	k = rocemu_fault_inject_totals(fx.dev);
	ck_assert_uint_eq(k.dropped, 5);
	ck_assert_uint_eq(k.duplicated, 3);
	/* Nor does the device's stop lose what the live injector did. */
	faults("drop=1");
	send_numbered(tx, &rx_addr, 0, 2);
	ck_assert_uint_eq(drain(rx, NULL, 0), 0);
	rocemu_fault_inject_stop(fx.dev);
	k = rocemu_fault_inject_totals(fx.dev);
	ck_assert_uint_eq(k.dropped, 7);
	ck_assert_uint_eq(k.duplicated, 3);
	close(tx);
	close(rx);
}
END_TEST

/* The same rate and seed drop the same datagrams: a run with faults repeats. */
START_TEST(test_fault_seeded_drops_repeat)
{
	struct sockaddr_in tx_addr, rx_addr;
	int tx = udp_socket(&tx_addr), rx = udp_socket(&rx_addr);
	unsigned int first[64] = { 0 }, second[64] = { 0 }, got;
	struct rocemu_fault_counters k;

	faults("drop=0.5,seed=7");
	send_numbered(tx, &rx_addr, 0, 64);
	got = drain(rx, first, 64);
	k = rocemu_fault_inject_totals(fx.dev);
	ck_assert_uint_eq(got + k.dropped, 64);
	ck_assert_uint_gt(got, 0);
	ck_assert_uint_gt(k.dropped, 0);
	faults("drop=0.5,seed=7");
	send_numbered(tx, &rx_addr, 0, 64);
	ck_assert_uint_eq(drain(rx, second, 64), got);
	ck_assert_mem_eq(first, second, sizeof(first));
	ck_assert_uint_eq(rocemu_fault_inject_totals(fx.dev).dropped, 2 * k.dropped);
	close(tx);
	close(rx);
}
END_TEST

/* ---- stats.c ---- */

static char stats[16 * 1024];

static const char *stats_text(void)
{
	int n = rocemu_stats_text(&fx.emu, stats, sizeof(stats));

	ck_assert_int_gt(n, 0);
	ck_assert_uint_eq(strlen(stats) + 1, (size_t)n);
	return stats;
}

/* The value of counter name of rocemu0. */
static unsigned long long counter(const char *name)
{
	char head[96];
	const char *p;
	unsigned long long v;

	snprintf(head, sizeof(head), "rocemu0 %s ", name);
	p = stats_text();
	while (p && strncmp(p, head, strlen(head)))
		p = (p = strchr(p, '\n')) ? p + 1 : NULL;
	ck_assert_msg(p != NULL, "no counter %s in:\n%s", name, stats);
	ck_assert_int_eq(sscanf(p + strlen(head), "%llu\n", &v), 1);
	return v;
}

START_TEST(test_stats_lines)
{
	unsigned int lines = 0;
	const char *p;

	for (p = stats_text(); *p; p = strchr(p, '\n') + 1) {
		ck_assert_msg(!strncmp(p, "rocemu0 ", 8), "line without the device: %s", p);
		lines++;
	}
	/* 45 counters and the faults line, every one of them 0 or off before any traffic. */
	ck_assert_uint_eq(lines, 46);
	ck_assert_uint_eq(counter("direct_wakeups"), 0);
	ck_assert_uint_eq(counter("raw_rx_dropped"), 0);
	ck_assert_uint_eq(counter("vxlan_rx_frames"), 0);
	ck_assert_uint_eq(counter("vxlan_fdb_learned"), 0);
	ck_assert_uint_eq(counter("port_xmit_packets"), 0);
	ck_assert_uint_eq(counter("rx_eth_dropped"), 0);
	ck_assert_uint_eq(counter("rx_dc_key_violations"), 0);
	ck_assert_uint_eq(counter("fault_delayed"), 0);
	ck_assert_ptr_nonnull(strstr(stats, "\nrocemu0 faults off\n"));
}
END_TEST

START_TEST(test_stats_follow_packets)
{
	const struct fx_hdrs to_nobody = { .psn = 0, .dest_qpn = 0x00fff0 };
	struct fx_pkt bad;
	uint64_t words = 0;

	post_send(3 * FX_MTU_BYTES);
	fx_doorbell();
	ck_assert_uint_eq(fx.nwire, 3);
	for (unsigned int i = 0; i < fx.nwire; i++)
		words += fx.wire[i].len / ROCEMU_PORT_DATA_WORD;
	ck_assert_uint_eq(counter("port_xmit_packets"), 3);
	ck_assert_uint_eq(counter("port_xmit_data"), words);
	fx_rx_ack(FX_SQ_PSN + 2, 0, 1);
	ck_assert_uint_eq(counter("port_rcv_packets"), 1);
	ck_assert_uint_gt(counter("port_rcv_data"), 0);
	ck_assert_uint_eq(counter("rx_dropped"), 0);
	/* One bit flipped past the BTH: counted as received, then dropped for its ICRC. */
	fx_pkt_build(&bad, ROCEMU_OP_RC_ACKNOWLEDGE, &(struct fx_hdrs){ .psn = FX_SQ_PSN + 2 }, NULL, 0);
	bad.data[ROCEMU_BTH_BYTES] ^= 0x01;
	fx_rx(&bad);
	ck_assert_uint_eq(counter("port_rcv_packets"), 2);
	ck_assert_uint_eq(counter("rx_icrc_errors"), 1);
	ck_assert_uint_eq(counter("rx_dropped"), 1);
	fx_rx_build(ROCEMU_OP_RC_SEND_ONLY, &to_nobody, "x", 1);
	ck_assert_uint_eq(counter("rx_no_qp"), 1);
	ck_assert_uint_eq(counter("rx_dropped"), 2);
	/* A port that is down sends nothing: its packets are discards. */
	ck_assert_int_eq(rocemu_emu_set_port_state(&fx.emu, fx.dev, IBV_PORT_DOWN), 0);
	post_send(8);
	fx_doorbell();
	ck_assert_uint_eq(fx.nwire, 3);
	ck_assert_uint_eq(counter("port_xmit_packets"), 3);
	ck_assert_uint_eq(counter("port_xmit_discards"), 1);
}
END_TEST

START_TEST(test_stats_faults)
{
	struct sockaddr_in tx_addr, rx_addr;
	int tx = udp_socket(&tx_addr), rx = udp_socket(&rx_addr);

	faults("drop=1");
	send_numbered(tx, &rx_addr, 0, 4);
	ck_assert_uint_eq(counter("fault_dropped"), 4);
	ck_assert_ptr_nonnull(strstr(stats, "\nrocemu0 faults drop=1\n"));
	faults("dup=0.25,seed=9");
	ck_assert_uint_eq(counter("fault_dropped"), 4);
	ck_assert_ptr_nonnull(strstr(stats, "\nrocemu0 faults dup=0.25,seed=9\n"));
	faults("off");
	ck_assert_uint_eq(counter("fault_dropped"), 4);
	ck_assert_ptr_nonnull(strstr(stats, "\nrocemu0 faults off\n"));
	close(tx);
	close(rx);
}
END_TEST

START_TEST(test_stats_too_small)
{
	int n = rocemu_stats_text(&fx.emu, stats, sizeof(stats));

	ck_assert_int_gt(n, 1);
	ck_assert_int_eq(rocemu_stats_text(&fx.emu, stats, 0), -ENOSPC);
	ck_assert_int_eq(rocemu_stats_text(&fx.emu, stats, 40), -ENOSPC);
	ck_assert_int_eq(rocemu_stats_text(&fx.emu, stats, (size_t)n - 1), -ENOSPC);
	ck_assert_int_eq(rocemu_stats_text(&fx.emu, stats, (size_t)n), n);
}
END_TEST

/* ---- trace.c ---- */

/* A tracer of kinds for qpn (ROCEMU_TRACE_ANY_QP: all) on every device; the fd its lines come on. */
static int tracer(uint32_t kinds, uint32_t qpn)
{
	const struct rocemu_trace_req req = { .qpn = qpn, .kinds = kinds };
	int fd;

	ck_assert_int_eq(rocemu_trace_start(fx.client, &req, &fd), 0);
	return fd;
}

/* The next line of fd without its time and device ("HH:MM:SS.uuuuuu rocemu0 "); NULL if none. */
static const char *trace_line(int fd)
{
	static char line[512];
	unsigned int h, m, s, us;
	ssize_t n = recv(fd, line, sizeof(line) - 1, MSG_DONTWAIT);

	if (n <= 0)
		return NULL;
	line[n] = '\0';
	ck_assert_int_eq(line[n - 1], '\n');
	line[n - 1] = '\0';
	ck_assert_int_eq(sscanf(line, "%2u:%2u:%2u.%6u ", &h, &m, &s, &us), 4);
	ck_assert_msg(!strncmp(line + 16, "rocemu0 ", 8), "%s", line);
	return line + 24;
}

static const char *opname(uint8_t opcode)
{
	return rocemu_opcode_info(opcode)->name;
}

START_TEST(test_trace_send_ack_cqe)
{
	int fd = tracer(ROCEMU_TRACE_PACKET | ROCEMU_TRACE_CQE, ROCEMU_TRACE_ANY_QP);
	char want[256];
	const char *line;

	post_send(4);
	fx_doorbell();
	snprintf(want, sizeof(want), "tx " FX_DEV_IP ":%u > " FX_PEER_IP " QP 0x%06x %s PSN %u 4 B",
		 ntohs(fx.wire[0].flow.sport), FX_PEER_QPN, opname(ROCEMU_OP_RC_SEND_ONLY),
		 FX_SQ_PSN);
	line = trace_line(fd);
	ck_assert_ptr_nonnull(line);
	ck_assert_str_eq(line, want);
	ck_assert_ptr_null(trace_line(fd));
	fx_rx_ack(FX_SQ_PSN, 0, 1);
	snprintf(want, sizeof(want), "rx " FX_PEER_IP ":%u > " FX_DEV_IP " QP 0x%06x %s PSN %u 0 B ACK",
		 FX_PEER_SPORT, fx.qp.qpn, opname(ROCEMU_OP_RC_ACKNOWLEDGE), FX_SQ_PSN);
	line = trace_line(fd);
	ck_assert_ptr_nonnull(line);
	ck_assert_str_eq(line, want);
	fx_turn();
	line = trace_line(fd);
	ck_assert_ptr_nonnull(line);
	snprintf(want, sizeof(want), "cqe cq 0x%x qp 0x%06x send wqe 0 ", fx.scq.cqn, fx.qp.qpn);
	ck_assert_msg(!strncmp(line, want, strlen(want)), "%s", line);
	ck_assert_msg(strstr(line, ": success") != NULL, "%s", line);
	close(fd);
}
END_TEST

/* What the receive path decodes: a bad ICRC said, a runt called malformed, DETH's source QP. */
START_TEST(test_trace_decodes)
{
	const struct rocemu_ipv4_udp flow = { .saddr = inet_addr(FX_PEER_IP), .daddr = fx.dev->ipv4,
					      .sport = htons(FX_PEER_SPORT),
					      .dport = htons(ROCEMU_ROCEV2_PORT) };
	const struct fx_hdrs ud = { .psn = 9, .qkey = FX_QKEY };
	int fd = tracer(ROCEMU_TRACE_PACKET, ROCEMU_TRACE_ANY_QP);
	static uint8_t run[2 * FX_PKT_MAX];
	char want[256];
	struct fx_pkt p;

	fx_pkt_build(&p, ROCEMU_OP_UD_SEND_ONLY, &ud, "12345678", 8);
	rocemu_trace_packets(fx.dev, false, &flow, p.data, p.len, 0);
	snprintf(want, sizeof(want), "rx " FX_PEER_IP ":%u > " FX_DEV_IP " QP 0x%06x %s PSN 9 8 B "
		 "src QP 0x%06x", FX_PEER_SPORT, fx.qp.qpn, opname(ROCEMU_OP_UD_SEND_ONLY),
		 FX_PEER_QPN);
	ck_assert_str_eq(trace_line(fd), want);
	p.data[p.len - 1] ^= 0xff;
	rocemu_trace_packets(fx.dev, false, &flow, p.data, p.len, 0);
	ck_assert_str_eq(trace_line(fd), strcat(want, " ICRC bad"));
	rocemu_trace_packets(fx.dev, false, &flow, p.data, 5, 0);
	snprintf(want, sizeof(want), "rx " FX_PEER_IP ":%u > " FX_DEV_IP " malformed, 5 bytes ICRC bad",
		 FX_PEER_SPORT);
	ck_assert_str_eq(trace_line(fd), want);
	/* A run of two packets received together: a line each. */
	fx_pkt_build(&p, ROCEMU_OP_UD_SEND_ONLY, &ud, "12345678", 8);
	memcpy(run, p.data, p.len);
	memcpy(run + p.len, p.data, p.len);
	rocemu_trace_packets(fx.dev, false, &flow, run, 2 * p.len, p.len);
	snprintf(want, sizeof(want), "rx " FX_PEER_IP ":%u > " FX_DEV_IP " QP 0x%06x %s PSN 9 8 B "
		 "src QP 0x%06x", FX_PEER_SPORT, fx.qp.qpn, opname(ROCEMU_OP_UD_SEND_ONLY),
		 FX_PEER_QPN);
	ck_assert_str_eq(trace_line(fd), want);
	ck_assert_str_eq(trace_line(fd), want);
	ck_assert_ptr_null(trace_line(fd));
	close(fd);
}
END_TEST

/* A tracer of one QP sees its packets both ways (a sent one found by its flow) and no other's. */
START_TEST(test_trace_qp_filter)
{
	int mine = tracer(ROCEMU_TRACE_PACKET, fx.qp.qpn);
	int other = tracer(ROCEMU_TRACE_PACKET, fx.qp.qpn + 1);
	int cqes = tracer(ROCEMU_TRACE_CQE, ROCEMU_TRACE_ANY_QP);
	const char *line;

	post_send(4);
	fx_doorbell();
	fx_rx_ack(FX_SQ_PSN, 0, 1);
	line = trace_line(mine);
	ck_assert_ptr_nonnull(line);
	ck_assert_msg(!strncmp(line, "tx ", 3), "%s", line);
	line = trace_line(mine);
	ck_assert_ptr_nonnull(line);
	ck_assert_msg(!strncmp(line, "rx ", 3), "%s", line);
	ck_assert_ptr_null(trace_line(mine));
	ck_assert_ptr_null(trace_line(other));
	/* The CQE tracer had no packet line. */
	fx_turn();
	line = trace_line(cqes);
	ck_assert_ptr_nonnull(line);
	ck_assert_msg(!strncmp(line, "cqe ", 4), "%s", line);
	close(mine);
	close(other);
	close(cqes);
}
END_TEST

/* A flushed WQE's CQE line names its error and syndrome. */
START_TEST(test_trace_error_cqe)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	int fd;
	char want[96];
	const char *line;

	ck_assert_int_eq(fx_qp_modify(&attr, IBV_QP_STATE), 0);
	fd = tracer(ROCEMU_TRACE_CQE, ROCEMU_TRACE_ANY_QP);
	post_send(4);
	fx_doorbell();
	line = trace_line(fd);
	ck_assert_ptr_nonnull(line);
	snprintf(want, sizeof(want), "cqe cq 0x%x qp 0x%06x send wqe 0: ", fx.scq.cqn, fx.qp.qpn);
	ck_assert_msg(!strncmp(line, want, strlen(want)), "%s", line);
	ck_assert_msg(strstr(line, "(syndrome 0x05)") != NULL, "%s", line);
	close(fd);
}
END_TEST

static Suite *observe_suite(void)
{
	Suite *s = suite_create("observe");
	TCase *capture = tcase_create("capture");
	TCase *tap = tcase_create("tap");
	TCase *fault = tcase_create("fault_inject");
	TCase *st = tcase_create("stats");
	TCase *trace = tcase_create("trace");

	tcase_add_checked_fixture(capture, observe_setup, observe_teardown);
	tcase_add_test(capture, test_capture_snaplen_from_env);
	tcase_add_test(capture, test_capture_refusals);
	tcase_add_test(capture, test_capture_records);
	tcase_add_test(capture, test_capture_snaplen_cuts);
	suite_add_tcase(s, capture);
	tcase_add_checked_fixture(tap, observe_setup, observe_teardown);
	tcase_add_test(tap, test_tap_rx_counts_and_times);
	tcase_add_test(tap, test_tap_start_from_env);
	tcase_add_test(tap, test_tap_start_refusals);
	suite_add_tcase(s, tap);
	tcase_add_checked_fixture(fault, observe_setup, observe_teardown);
	tcase_add_test(fault, test_fault_set_refused);
	tcase_add_test(fault, test_fault_drop_and_dup_exactly);
	tcase_add_test(fault, test_fault_seeded_drops_repeat);
	suite_add_tcase(s, fault);
	tcase_add_checked_fixture(st, observe_setup, observe_teardown);
	tcase_add_test(st, test_stats_lines);
	tcase_add_test(st, test_stats_follow_packets);
	tcase_add_test(st, test_stats_faults);
	tcase_add_test(st, test_stats_too_small);
	suite_add_tcase(s, st);
	tcase_add_checked_fixture(trace, observe_setup, observe_teardown);
	tcase_add_test(trace, test_trace_send_ack_cqe);
	tcase_add_test(trace, test_trace_decodes);
	tcase_add_test(trace, test_trace_qp_filter);
	tcase_add_test(trace, test_trace_error_cqe);
	suite_add_tcase(s, trace);
	return s;
}

int main(void)
{
	return fx_suite_run(observe_suite());
}
