/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Capture of RoCEv2 datagrams to a pcap file (libpcap's format). Each datagram
 * becomes the Ethernet II frame a real port would carry: MACs derived from
 * the IPv4 addresses (02:00:a:b:c:d), the IPv4 header the datagram had on
 * the wire (the caller says its ID, flags, TTL and TOS) and a UDP header
 * with its checksum, so Wireshark decodes RoCE on port 4791 with no
 * warning. Each frame has its own time: a run of datagrams sent or
 * received together is spread over the time the link takes to carry it.
 *
 * Snap length: a record keeps the first snaplen bytes of its frame (0: the
 * whole frame, as tcpdump -s 0) and says the whole frame's length; the
 * headers of a cut frame are those of the whole one but for its UDP
 * checksum, 0 (none, RFC 768): the bytes cut are neither copied nor summed.
 *
 * Flush policy: records are built in place in a batch of whole records
 * (1 MiB) that goes in one write when full, when a write finds the last
 * flush ROCEMU_PCAP_FLUSH_NS or more ago, on rocemu_pcap_flush() and on
 * rocemu_pcap_close(), to a child process that writes the file
 * (pcap_sink.c): the kernel may stop a write to a file between two pages
 * on SIGKILL, so only the child, which outlives its daemon, writes, and
 * only whole records. The file ends at a record whatever kills the daemon;
 * what it had not handed over is lost. A writer keeps
 * at most a few milliseconds of frames in memory while traffic flows, and
 * costs one clock read per run of packets written together; when traffic
 * stops, the last frames wait for the next write or an explicit flush (a
 * daemon calls it when idle).
 */
#ifndef ROCEMU_NET_PCAP_H
#define ROCEMU_NET_PCAP_H

#include <stddef.h>
#include <stdint.h>

#include "net/roce/icrc.h"

/*
 * The whole frame of a CM MAD (Eth 14 + IPv4 20 + UDP 8 + BTH 12 + DETH 8 +
 * MAD 256 + ICRC 4), which Wireshark decodes only whole, and of every ACK;
 * of the others every header (102 bytes at most: a DC atomic's) and 220 or
 * more bytes of payload, a 13th of a 4096-byte MTU frame.
 */
#define ROCEMU_PCAP_SNAPLEN_DEFAULT 322u
/* libpcap's largest snap length (tcpdump's -s 0), what a whole-frame file says. */
#define ROCEMU_PCAP_SNAPLEN_MAX 262144u
#define ROCEMU_PCAP_FLUSH_NS (5ull * 1000000ull)

struct rocemu_pcap;

/* How a run of datagrams went over the wire, for their frames' headers and times. */
struct rocemu_pcap_run {
	const struct rocemu_ipv4_udp *flow;
	/* The first datagram's; each next one's ID is one more (rocemu_ipv4_send_id). */
	struct rocemu_ipv4_fields ip;
	/* Their UDP checksum is 0, as RoCE NICs send it; otherwise it is summed. */
	bool udp_check_zero;
	/* CLOCK_REALTIME nanoseconds of the first frame, 0 for now. */
	uint64_t ns;
	/* Picoseconds a bit takes on the link: each next frame is stamped when the one
	 * before it has passed, so no two frames of a run share a time. */
	uint32_t bit_ps;
};

/* Ethernet, IPv4 and UDP: the headers a datagram's frame begins with. */
#define ROCEMU_PCAP_FRAME_HDR_BYTES 42u

/*
 * The Ethernet, IPv4 and UDP headers at frame of a datagram of flow with
 * IPv4 fields ip and len bytes of payload; its UDP checksum over
 * udp_payload, or 0 (none, RFC 768) without. Sniffer rules see RoCE
 * datagrams framed so too.
 */
void rocemu_pcap_frame_headers(uint8_t *frame, const struct rocemu_ipv4_udp *flow,
			       const struct rocemu_ipv4_fields *ip, const uint8_t *udp_payload,
			       size_t len);

/* Picoseconds a datagram of udp_len bytes of payload takes on a link of bit_ps. */
uint64_t rocemu_pcap_frame_ps(size_t udp_len, uint32_t bit_ps);

/*
 * Parse a snap length (ROCEMU_PCAP_SNAPLEN): decimal bytes from 0 (whole
 * frames) to ROCEMU_PCAP_SNAPLEN_MAX. Returns 0 with *snaplen set, or
 * -EINVAL for anything else (sign, other characters, too large, empty).
 */
int rocemu_pcap_snaplen_parse(const char *text, uint32_t *snaplen);

/*
 * Create the pcap file at path, mode 0600, link type Ethernet, records cut
 * at snaplen bytes (0: whole frames; the file header says
 * ROCEMU_PCAP_SNAPLEN_MAX then). Never through a symbolic link (ELOOP); an
 * existing file is replaced only in a directory of this user that no
 * other may write (else EEXIST). Returns the writer, or NULL with errno
 * set (the open() or write() errno, EINVAL for snaplen over the maximum,
 * ENOMEM).
 */
struct rocemu_pcap *rocemu_pcap_open(const char *path, uint32_t snaplen);

/*
 * Append the datagrams of run (addresses and ports in network order) whose
 * UDP payloads are buf[0, len) (BTH to ICRC): one, or with seg > 0 and
 * seg < len a run of seg-byte datagrams (the last possibly shorter),
 * stamped as run says (nanoseconds, each after every earlier record).
 * Returns 0, -EINVAL for a NULL argument, -EMSGSIZE when a datagram does
 * not fit in IPv4 (nothing written), the -errno of the file's earlier
 * write error (-ENOSPC, say), or that of the flush this write triggered.
 */
int rocemu_pcap_write(struct rocemu_pcap *p, const struct rocemu_pcap_run *run,
		      const uint8_t *buf, size_t len, size_t seg);

/*
 * Append an Ethernet frame as it is (a RAW_PACKET QP's), stamped now, cut
 * at the snap length. Returns 0, -EINVAL for a NULL argument, -EMSGSIZE
 * past the largest record, or the -errno of the file's write error.
 */
int rocemu_pcap_write_frame(struct rocemu_pcap *p, const uint8_t *frame, size_t len);

/* Push buffered frames to the file. Returns 0 or the -errno of the file's write error. */
int rocemu_pcap_flush(struct rocemu_pcap *p);

/*
 * Flush, close the file (waiting for the process that writes it) and free
 * p (NULL is a no-op). Returns 0, or -errno when a buffered frame could
 * not be written (p is freed anyway).
 */
int rocemu_pcap_close(struct rocemu_pcap *p);

/*
 * Write "<dir>/<devname>.pcap" into buf of size bytes. Returns 0, -EINVAL
 * for a NULL argument or size 0, -ENAMETOOLONG when it does not fit (buf
 * then holds an empty string).
 */
int rocemu_pcap_default_path(char *buf, size_t size, const char *dir, const char *devname);

#endif /* ROCEMU_NET_PCAP_H */
