/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* pcap writer: datagrams framed as Ethernet II / IPv4 / UDP (see pcap.h). */
#include <errno.h>
#include <fcntl.h>
#include <net/ethernet.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <pcap/pcap.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "net/pcap.h"
#include "net/pcap_sink.h"

#define FRAME_HDR_BYTES (sizeof(struct ether_header) + sizeof(struct iphdr) + sizeof(struct udphdr))
#define MAX_UDP_PAYLOAD (65535 - sizeof(struct iphdr) - sizeof(struct udphdr))

/* What Linux writes for the daemon's unconnected IP_PMTUDISC_DO socket (roce-wire.md). */
#define IP_TTL_LINUX 64
#define IP_DF 0x4000

#define PCAP_MAGIC_NS 0xa1b23c4du	/* times in nanoseconds */
_Static_assert(ROCEMU_PCAP_RECORD_HDR_BYTES == 4 * sizeof(uint32_t) &&
	       ROCEMU_PCAP_RECORD_CAPLEN_AT == 2 * sizeof(uint32_t),
	       "a record header is four words, the bytes kept the third");
#define BATCH_BYTES (1u << 20)

struct rocemu_pcap {
	int fd;			/* the pipe to the writer process (pcap_sink.c) */
	pid_t sink;		/* that process */
	bool failed;		/* a write failed: the file ends at the last whole record */
	uint32_t snaplen;	/* bytes kept of a frame, 0: all */
	uint64_t last_flush_ns;	/* CLOCK_REALTIME */
	uint64_t last_ns;	/* time of the last record: no record goes before it */
	size_t used;		/* bytes of whole records in batch */
	uint8_t batch[BATCH_BYTES];
};

int rocemu_pcap_snaplen_parse(const char *text, uint32_t *snaplen)
{
	unsigned long long v = 0;
	const char *c;

	if (!text || !*text)
		return -EINVAL;
	for (c = text; *c; c++) {
		if (*c < '0' || *c > '9')
			return -EINVAL;
		v = v * 10 + (unsigned int)(*c - '0');
		if (v > ROCEMU_PCAP_SNAPLEN_MAX)
			return -EINVAL;
	}
	*snaplen = (uint32_t)v;
	return 0;
}

struct rocemu_pcap *rocemu_pcap_open(const char *path, uint32_t snaplen)
{
	struct pcap_file_header hdr = {
		.magic = PCAP_MAGIC_NS, .version_major = PCAP_VERSION_MAJOR,
		.version_minor = PCAP_VERSION_MINOR,
		.snaplen = snaplen ? snaplen : ROCEMU_PCAP_SNAPLEN_MAX, .linktype = DLT_EN10MB,
	};
	struct rocemu_pcap *p;
	int fd, err;

	if (!path || snaplen > ROCEMU_PCAP_SNAPLEN_MAX) {
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->snaplen = snaplen;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	err = fd < 0 ? errno : 0;
	if (!err) {
		p->fd = rocemu_pcap_sink_start(fd, &hdr, sizeof(hdr), &p->sink);
		err = p->fd < 0 ? -p->fd : 0;
	}
	if (err) {
		free(p);
		errno = err;
		return NULL;
	}
	return p;
}

/*
 * RFC 1071 sum of buf (which starts at an even offset of the summed data)
 * in 32-bit words of host order, folded and inverted by csum_finish(): the
 * one's complement sum does not depend on byte order or word width.
 */
static uint64_t csum_add(uint64_t sum, const uint8_t *buf, size_t len)
{
	uint32_t word;
	uint16_t half = 0;

	for (; len >= 4; buf += 4, len -= 4) {
		memcpy(&word, buf, 4);
		sum += word;
	}
	if (len >= 2) {
		memcpy(&half, buf, 2);
		sum += half;
		buf += 2;
		len -= 2;
	}
	if (len) {
		half = 0;
		memcpy(&half, buf, 1);
		sum += half;
	}
	return sum;
}

/* Network-order checksum of a sum. */
static uint16_t csum_finish(uint64_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* The project's MAC for IPv4 a.b.c.d: 02:00:a:b:c:d. */
static void mac_from_ipv4(uint8_t mac[ETH_ALEN], uint32_t addr_be)
{
	mac[0] = 0x02;
	mac[1] = 0x00;
	memcpy(&mac[2], &addr_be, 4);
}

void rocemu_ipv4_header(struct iphdr *ip, const struct rocemu_ipv4_udp *flow, size_t len)
{
	*ip = (struct iphdr){
		.version = 4, .ihl = sizeof(struct iphdr) / 4, .tos = 0,
		.tot_len = htons((uint16_t)(sizeof(struct iphdr) + sizeof(struct udphdr) + len)),
		.id = 0, .frag_off = htons(IP_DF), .ttl = IP_TTL_LINUX, .protocol = IPPROTO_UDP,
		.saddr = flow->saddr, .daddr = flow->daddr,
	};
	ip->check = csum_finish(csum_add(0, (const uint8_t *)ip, sizeof(*ip)));
}

/*
 * The Ethernet, IPv4 and UDP headers at frame of a datagram of len bytes of
 * payload; its UDP checksum over udp_payload, or 0 (none, RFC 768) without.
 */
static void frame_headers(uint8_t *frame, const struct rocemu_ipv4_udp *flow,
			  const uint8_t *udp_payload, size_t len)
{
	struct ether_header eth = { .ether_type = htons(ETHERTYPE_IP) };
	struct iphdr ip;
	uint16_t udp_len = (uint16_t)(sizeof(struct udphdr) + len);
	struct udphdr udp = { .source = flow->sport, .dest = flow->dport, .len = htons(udp_len) };
	uint8_t *udp_at = frame + sizeof(eth) + sizeof(ip);
	uint8_t pseudo[12];
	uint16_t sum;

	mac_from_ipv4(eth.ether_dhost, flow->daddr);
	mac_from_ipv4(eth.ether_shost, flow->saddr);
	rocemu_ipv4_header(&ip, flow, len);
	memcpy(frame, &eth, sizeof(eth));
	memcpy(frame + sizeof(eth), &ip, sizeof(ip));
	if (!udp_payload) {
		memcpy(udp_at, &udp, sizeof(udp));
		return;
	}

	/* RFC 768: over the pseudo header, the UDP header and the payload; 0 is sent as 0xffff. */
	memcpy(&pseudo[0], &flow->saddr, 4);
	memcpy(&pseudo[4], &flow->daddr, 4);
	pseudo[8] = 0;
	pseudo[9] = IPPROTO_UDP;
	pseudo[10] = (uint8_t)(udp_len >> 8);
	pseudo[11] = (uint8_t)udp_len;
	sum = csum_finish(csum_add(csum_add(csum_add(0, pseudo, sizeof(pseudo)),
					    (const uint8_t *)&udp, sizeof(udp)), udp_payload, len));
	udp.check = sum ? sum : 0xffff;
	memcpy(udp_at, &udp, sizeof(udp));
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Append the record of one datagram stamped ns, cut at the snap length. */
static int write_record(struct rocemu_pcap *p, const struct rocemu_ipv4_udp *flow,
			const uint8_t *udp_payload, size_t len, uint64_t ns)
{
	uint32_t rec[4], frame_len = (uint32_t)(FRAME_HDR_BYTES + len);
	uint32_t caplen = p->snaplen && p->snaplen < frame_len ? p->snaplen : frame_len;
	const uint8_t *summed;
	uint8_t *at;
	int ret;

	if (p->used + ROCEMU_PCAP_RECORD_HDR_BYTES + caplen > sizeof(p->batch)) {
		ret = rocemu_pcap_flush(p);
		if (ret)
			return ret;
	}
	at = p->batch + p->used;
	rec[0] = (uint32_t)(ns / 1000000000u);
	rec[1] = (uint32_t)(ns % 1000000000u);
	rec[2] = caplen;
	rec[3] = frame_len;
	memcpy(at, rec, sizeof(rec));
	at += ROCEMU_PCAP_RECORD_HDR_BYTES;
	/* Built in place: the batch only ever holds whole records. A cut datagram's
	 * UDP checksum would be summed over bytes the record does not hold: none. */
	summed = caplen == frame_len ? udp_payload : NULL;
	if (caplen >= FRAME_HDR_BYTES) {
		frame_headers(at, flow, summed, len);
		memcpy(at + FRAME_HDR_BYTES, udp_payload, caplen - FRAME_HDR_BYTES);
	} else {
		uint8_t hdrs[FRAME_HDR_BYTES];

		frame_headers(hdrs, flow, summed, len);
		memcpy(at, hdrs, caplen);
	}
	p->used += ROCEMU_PCAP_RECORD_HDR_BYTES + caplen;
	return 0;
}

int rocemu_pcap_write(struct rocemu_pcap *p, const struct rocemu_ipv4_udp *flow,
		      const uint8_t *buf, size_t len, size_t seg)
{
	uint64_t now, ns;
	size_t off, n;
	int ret;

	if (!p || !flow || (!buf && len))
		return -EINVAL;
	if (!seg || seg > len)
		seg = len;
	if (seg > MAX_UDP_PAYLOAD)
		return -EMSGSIZE;
	if (p->failed)
		return -EIO;
	/* One clock read for the run; a clock stepped back does not reorder the file. */
	now = now_ns();
	ns = now > p->last_ns ? now : p->last_ns;
	p->last_ns = ns;
	off = 0;
	do {
		n = len - off < seg ? len - off : seg;
		ret = write_record(p, flow, buf + off, n, ns);
		if (ret)
			return ret;
		off += n;
	} while (off < len);

	/* A clock stepped backwards also flushes, so a step cannot stall the file. */
	if (now - p->last_flush_ns >= ROCEMU_PCAP_FLUSH_NS || now < p->last_flush_ns)
		return rocemu_pcap_flush(p);
	return 0;
}

int rocemu_pcap_flush(struct rocemu_pcap *p)
{
	int ret;

	if (!p)
		return -EINVAL;
	p->last_flush_ns = now_ns();
	if (p->failed)
		return -EIO;
	ret = rocemu_pcap_sink_write(p->fd, p->batch, p->used);
	p->used = 0;
	if (ret)
		p->failed = true;
	return ret;
}

int rocemu_pcap_close(struct rocemu_pcap *p)
{
	int rc, err;

	if (!p)
		return 0;
	rc = rocemu_pcap_flush(p);
	err = rocemu_pcap_sink_stop(p->fd, p->sink);
	if (!rc)
		rc = err;
	free(p);
	return rc;
}

int rocemu_pcap_default_path(char *buf, size_t size, const char *dir, const char *devname)
{
	int n;

	if (!buf || !size || !dir || !devname)
		return -EINVAL;
	n = snprintf(buf, size, "%s/%s.pcap", dir, devname);
	if (n < 0 || (size_t)n >= size) {
		buf[0] = '\0';
		return -ENAMETOOLONG;
	}
	return 0;
}
