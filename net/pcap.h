/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Capture of RoCEv2 datagrams to a pcap file (libpcap's format). Each datagram
 * becomes the Ethernet II frame a real port would carry: MACs derived from
 * the IPv4 addresses (02:00:a:b:c:d), the IPv4 header Linux writes for the
 * daemon's unconnected socket (ID 0, DF, TTL 64) and a UDP header with its
 * checksum, so Wireshark decodes RoCE on port 4791 with no warning.
 *
 * Flush policy: frames are built in place in a batch of whole records (1 MiB)
 * that reaches the file in one write when full, when a write finds the last
 * flush ROCEMU_PCAP_FLUSH_NS or more ago, on rocemu_pcap_flush() and on
 * rocemu_pcap_close(); so the file always ends at a record, even when the
 * daemon is killed. A writer keeps at most a few milliseconds of frames in
 * memory while traffic flows, and costs one clock read and one copy per
 * frame; when traffic stops, the last frames wait for the next write or an
 * explicit flush (a daemon calls it when idle).
 */
#ifndef ROCEMU_NET_PCAP_H
#define ROCEMU_NET_PCAP_H

#include <stddef.h>
#include <stdint.h>

#include "net/icrc.h"

#define ROCEMU_PCAP_SNAPLEN 65535
#define ROCEMU_PCAP_FLUSH_NS (5ull * 1000000ull)

struct rocemu_pcap;
struct iphdr;

/*
 * The IPv4 header of a datagram of flow with len bytes of UDP payload, as
 * Linux writes it for the daemon's sockets and the capture shows it (ID 0,
 * DF, TTL 64, checksum); also what a UD receive finds in its GRH.
 */
void rocemu_ipv4_header(struct iphdr *ip, const struct rocemu_ipv4_udp *flow, size_t len);

/*
 * Create (or truncate) the pcap file at path, link type Ethernet.
 * Returns the writer, or NULL with errno set (the fopen() errno, EIO when
 * libpcap gives none, ENOMEM).
 */
struct rocemu_pcap *rocemu_pcap_open(const char *path);

/*
 * Append one datagram of flow (addresses and ports in network order) whose
 * UDP payload is udp_payload[0, len) (BTH to ICRC), time-stamped now
 * (CLOCK_REALTIME, microseconds). Returns 0, -EINVAL for a NULL argument,
 * -EMSGSIZE when len does not fit in an IPv4 datagram, -EIO when the file
 * has had a write error, or the -errno of the flush this write triggered.
 */
int rocemu_pcap_write(struct rocemu_pcap *p, const struct rocemu_ipv4_udp *flow,
		      const uint8_t *udp_payload, size_t len);

/* Push buffered frames to the file. Returns 0 or -errno (-EIO by default). */
int rocemu_pcap_flush(struct rocemu_pcap *p);

/*
 * Flush, close the file and free p (NULL is a no-op). Returns 0, or -errno
 * when a buffered frame could not be written (p is freed anyway).
 */
int rocemu_pcap_close(struct rocemu_pcap *p);

/*
 * Write "<dir>/<devname>.pcap" into buf of size bytes. Returns 0, -EINVAL
 * for a NULL argument or size 0, -ENAMETOOLONG when it does not fit (buf
 * then holds an empty string).
 */
int rocemu_pcap_default_path(char *buf, size_t size, const char *dir, const char *devname);

#endif /* ROCEMU_NET_PCAP_H */
