/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* pcap writer: datagrams framed as Ethernet II / IPv4 / UDP (see pcap.h). */
#include <errno.h>
#include <net/ethernet.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "net/pcap.h"

#define FRAME_HDR_BYTES (sizeof(struct ether_header) + sizeof(struct iphdr) + sizeof(struct udphdr))
#define MAX_UDP_PAYLOAD (65535 - sizeof(struct iphdr) - sizeof(struct udphdr))

/* What Linux writes for the daemon's unconnected IP_PMTUDISC_DO socket (roce-wire.md). */
#define IP_TTL_LINUX 64
#define IP_DF 0x4000

struct rocemu_pcap {
	pcap_t *dead;		/* only carries link type and snaplen for the dumper */
	pcap_dumper_t *dumper;
	uint64_t last_flush_ns;	/* CLOCK_REALTIME */
	uint8_t frame[FRAME_HDR_BYTES + MAX_UDP_PAYLOAD];
};

struct rocemu_pcap *rocemu_pcap_open(const char *path)
{
	struct rocemu_pcap *p;
	int err;

	if (!path) {
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->dead = pcap_open_dead(DLT_EN10MB, ROCEMU_PCAP_SNAPLEN);
	if (!p->dead) {
		free(p);
		errno = ENOMEM;
		return NULL;
	}
	errno = 0;
	p->dumper = pcap_dump_open(p->dead, path);
	if (!p->dumper) {
		err = errno ? errno : EIO;
		pcap_close(p->dead);
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

int rocemu_pcap_write(struct rocemu_pcap *p, const struct rocemu_ipv4_udp *flow,
		      const uint8_t *udp_payload, size_t len)
{
	struct pcap_pkthdr hdr;
	struct timespec ts;
	uint64_t now_ns;

	if (!p || !flow || (!udp_payload && len))
		return -EINVAL;
	if (len > MAX_UDP_PAYLOAD)
		return -EMSGSIZE;
	if (ferror(pcap_dump_file(p->dumper)))
		return -EIO;
	memcpy(p->frame + FRAME_HDR_BYTES, udp_payload, len);
	frame_headers(p->frame, flow, len);
	clock_gettime(CLOCK_REALTIME, &ts);
	hdr.ts.tv_sec = ts.tv_sec;
	hdr.ts.tv_usec = ts.tv_nsec / 1000;
	hdr.len = (bpf_u_int32)(FRAME_HDR_BYTES + len);
	hdr.caplen = hdr.len < ROCEMU_PCAP_SNAPLEN ? hdr.len : ROCEMU_PCAP_SNAPLEN;
	pcap_dump((u_char *)p->dumper, &hdr, p->frame);

	now_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	/* A clock stepped backwards also flushes, so a step cannot stall the file. */
	if (now_ns - p->last_flush_ns >= ROCEMU_PCAP_FLUSH_NS || now_ns < p->last_flush_ns)
		return rocemu_pcap_flush(p);
	return 0;
}

int rocemu_pcap_flush(struct rocemu_pcap *p)
{
	struct timespec ts;

	if (!p)
		return -EINVAL;
	clock_gettime(CLOCK_REALTIME, &ts);
	p->last_flush_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	errno = 0;
	if (pcap_dump_flush(p->dumper))
		return errno ? -errno : -EIO;
	return 0;
}

int rocemu_pcap_close(struct rocemu_pcap *p)
{
	int rc;

	if (!p)
		return 0;
	rc = rocemu_pcap_flush(p);
	pcap_dump_close(p->dumper);
	pcap_close(p->dead);
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
