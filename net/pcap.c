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
#include <unistd.h>

#include "net/pcap.h"

#define FRAME_HDR_BYTES (sizeof(struct ether_header) + sizeof(struct iphdr) + sizeof(struct udphdr))
#define MAX_UDP_PAYLOAD (65535 - sizeof(struct iphdr) - sizeof(struct udphdr))

/* What Linux writes for the daemon's unconnected IP_PMTUDISC_DO socket (roce-wire.md). */
#define IP_TTL_LINUX 64
#define IP_DF 0x4000

/* The on-disk record header (libpcap's is private): seconds, microseconds, lengths. */
#define RECORD_HDR_BYTES 16u
#define PCAP_MAGIC_US 0xa1b2c3d4u
#define BATCH_BYTES (1u << 20)

struct rocemu_pcap {
	int fd;
	bool failed;		/* a write failed: the file ends at the last whole batch */
	uint64_t last_flush_ns;	/* CLOCK_REALTIME */
	size_t used;		/* bytes of whole records in batch */
	uint8_t batch[BATCH_BYTES];
};

/* Write all of buf to fd; 0 or -errno. */
static int write_all(int fd, const uint8_t *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

struct rocemu_pcap *rocemu_pcap_open(const char *path)
{
	struct pcap_file_header hdr = {
		.magic = PCAP_MAGIC_US, .version_major = PCAP_VERSION_MAJOR,
		.version_minor = PCAP_VERSION_MINOR, .snaplen = ROCEMU_PCAP_SNAPLEN,
		.linktype = DLT_EN10MB,
	};
	struct rocemu_pcap *p;
	int err;

	if (!path) {
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	err = p->fd < 0 ? errno : -write_all(p->fd, (const uint8_t *)&hdr, sizeof(hdr));
	if (err) {
		if (p->fd >= 0)
			close(p->fd);
		free(p);
		errno = err;
		return NULL;
	}
	return p;
}

/* RFC 1071 sum of 16-bit big-endian words, folded and inverted by csum_finish(). */
static uint64_t csum_add(uint64_t sum, const uint8_t *buf, size_t len)
{
	for (; len > 1; buf += 2, len -= 2)
		sum += (uint32_t)buf[0] << 8 | buf[1];
	if (len)
		sum += (uint32_t)buf[0] << 8;
	return sum;
}

/* Host-order checksum of a sum. */
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
	ip->check = htons(csum_finish(csum_add(0, (const uint8_t *)ip, sizeof(*ip))));
}

static void frame_headers(uint8_t *frame, const struct rocemu_ipv4_udp *flow, size_t len)
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
	memcpy(udp_at, &udp, sizeof(udp));

	/* RFC 768: over the pseudo header, the UDP header and the payload; 0 is sent as 0xffff. */
	memcpy(&pseudo[0], &flow->saddr, 4);
	memcpy(&pseudo[4], &flow->daddr, 4);
	pseudo[8] = 0;
	pseudo[9] = IPPROTO_UDP;
	pseudo[10] = (uint8_t)(udp_len >> 8);
	pseudo[11] = (uint8_t)udp_len;
	sum = csum_finish(csum_add(csum_add(0, pseudo, sizeof(pseudo)), udp_at, udp_len));
	udp.check = htons(sum ? sum : 0xffff);
	memcpy(udp_at, &udp, sizeof(udp));
}

static uint64_t now_ns(struct timespec *ts)
{
	clock_gettime(CLOCK_REALTIME, ts);
	return (uint64_t)ts->tv_sec * 1000000000ull + (uint64_t)ts->tv_nsec;
}

int rocemu_pcap_write(struct rocemu_pcap *p, const struct rocemu_ipv4_udp *flow,
		      const uint8_t *udp_payload, size_t len)
{
	uint32_t rec[4], frame_len = (uint32_t)(FRAME_HDR_BYTES + len);
	struct timespec ts;
	uint64_t now;
	int ret;

	if (!p || !flow || (!udp_payload && len))
		return -EINVAL;
	if (len > MAX_UDP_PAYLOAD)
		return -EMSGSIZE;
	if (p->failed)
		return -EIO;
	if (p->used + RECORD_HDR_BYTES + FRAME_HDR_BYTES + len > sizeof(p->batch)) {
		ret = rocemu_pcap_flush(p);
		if (ret)
			return ret;
	}
	now = now_ns(&ts);
	rec[0] = (uint32_t)ts.tv_sec;
	rec[1] = (uint32_t)(ts.tv_nsec / 1000);
	rec[2] = frame_len < ROCEMU_PCAP_SNAPLEN ? frame_len : ROCEMU_PCAP_SNAPLEN;
	rec[3] = frame_len;
	/* Built in place: the batch only ever holds whole records. */
	memcpy(p->batch + p->used, rec, sizeof(rec));
	memcpy(p->batch + p->used + RECORD_HDR_BYTES + FRAME_HDR_BYTES, udp_payload, len);
	frame_headers(p->batch + p->used + RECORD_HDR_BYTES, flow, len);
	p->used += RECORD_HDR_BYTES + rec[2];

	/* A clock stepped backwards also flushes, so a step cannot stall the file. */
	if (now - p->last_flush_ns >= ROCEMU_PCAP_FLUSH_NS || now < p->last_flush_ns)
		return rocemu_pcap_flush(p);
	return 0;
}

int rocemu_pcap_flush(struct rocemu_pcap *p)
{
	struct timespec ts;
	int ret;

	if (!p)
		return -EINVAL;
	p->last_flush_ns = now_ns(&ts);
	if (p->failed)
		return -EIO;
	ret = write_all(p->fd, p->batch, p->used);
	p->used = 0;
	if (ret)
		p->failed = true;
	return ret;
}

int rocemu_pcap_close(struct rocemu_pcap *p)
{
	int rc;

	if (!p)
		return 0;
	rc = rocemu_pcap_flush(p);
	if (close(p->fd) && !rc)
		rc = -errno;
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
