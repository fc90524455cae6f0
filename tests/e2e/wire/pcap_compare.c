/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * pcap_compare WIRE OURS: the RoCEv2 frames of a capture the kernel took
 * on an interface (WIRE) against those rocemu captured of the same run
 * (OURS), flow by flow (addresses and UDP ports), frame by frame, byte by
 * byte; and every frame of OURS stamped after the one before it. Prints
 * each difference and a summary line; exits 0 when there is none, 1
 * otherwise, 2 on bad usage or an unreadable file.
 */
#include <arpa/inet.h>
#include <net/ethernet.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <pcap/pcap.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROCEV2_PORT 4791
#define HDR_BYTES (sizeof(struct ether_header) + sizeof(struct iphdr) + sizeof(struct udphdr))
#define MAX_SHOWN 20	/* differences printed in full; the rest only counted */

struct frame {
	uint32_t saddr, daddr;	/* network order */
	uint16_t sport, dport;
	uint32_t len;
	uint8_t *bytes;
	uint64_t ns;
	bool matched;
};

struct capture {
	const char *path;
	struct frame *f;
	size_t n, cap;
};

static bool same_flow(const struct frame *a, const struct frame *b)
{
	return a->saddr == b->saddr && a->daddr == b->daddr && a->sport == b->sport &&
	       a->dport == b->dport;
}

static const char *flow_text(const struct frame *f, char *buf, size_t size)
{
	char s[INET_ADDRSTRLEN], d[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &f->saddr, s, sizeof(s));
	inet_ntop(AF_INET, &f->daddr, d, sizeof(d));
	snprintf(buf, size, "%s:%u > %s:%u", s, ntohs(f->sport), d, ntohs(f->dport));
	return buf;
}

/* Keep a whole IPv4/UDP frame to port 4791; anything else (ARP, cut frames) is not RoCE's. */
static int keep(struct capture *c, const struct pcap_pkthdr *h, const u_char *bytes)
{
	struct ether_header eth;
	struct iphdr ip;
	struct udphdr udp;
	struct frame *f;

	if (h->caplen < HDR_BYTES || h->caplen != h->len)
		return 0;
	memcpy(&eth, bytes, sizeof(eth));
	memcpy(&ip, bytes + sizeof(eth), sizeof(ip));
	memcpy(&udp, bytes + sizeof(eth) + sizeof(ip), sizeof(udp));
	if (ntohs(eth.ether_type) != ETHERTYPE_IP || ip.ihl != 5 || ip.protocol != IPPROTO_UDP ||
	    ntohs(udp.dest) != ROCEV2_PORT)
		return 0;
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 1024;
		struct frame *grown = realloc(c->f, cap * sizeof(*grown));

		if (!grown)
			return -1;
		c->f = grown;
		c->cap = cap;
	}
	f = &c->f[c->n];
	*f = (struct frame){ .saddr = ip.saddr, .daddr = ip.daddr, .sport = udp.source,
			     .dport = udp.dest, .len = h->len,
			     .ns = (uint64_t)h->ts.tv_sec * 1000000000u +
				   (uint64_t)h->ts.tv_usec };
	f->bytes = malloc(h->len);
	if (!f->bytes)
		return -1;
	memcpy(f->bytes, bytes, h->len);
	c->n++;
	return 0;
}

static int load(struct capture *c)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	pcap_t *in = pcap_open_offline_with_tstamp_precision(c->path, PCAP_TSTAMP_PRECISION_NANO,
							      errbuf);
	struct pcap_pkthdr *h;
	const u_char *bytes;
	int rc;

	if (!in) {
		fprintf(stderr, "pcap_compare: %s\n", errbuf);
		return -1;
	}
	if (pcap_datalink(in) != DLT_EN10MB) {
		fprintf(stderr, "pcap_compare: %s is not an Ethernet capture\n", c->path);
		pcap_close(in);
		return -1;
	}
	while ((rc = pcap_next_ex(in, &h, &bytes)) == 1)
		if (keep(c, h, bytes)) {
			fprintf(stderr, "pcap_compare: out of memory\n");
			rc = PCAP_ERROR;
			break;
		}
	if (rc == PCAP_ERROR)
		fprintf(stderr, "pcap_compare: %s: %s\n", c->path, pcap_geterr(in));
	pcap_close(in);
	return rc == PCAP_ERROR ? -1 : 0;
}

/* Where the search for each flow's next frame in ours goes on. */
#define MAX_FLOWS 256
struct cursor {
	const struct frame *flow;
	size_t at;
};

/* The next frame of a's flow in c after the last one taken, or NULL. */
static struct frame *next_of_flow(struct capture *c, const struct frame *a, struct cursor *cur,
				  size_t *ncur)
{
	struct cursor *k = cur;

	while (k < cur + *ncur && !same_flow(k->flow, a))
		k++;
	if (k == cur + *ncur) {
		if (*ncur == MAX_FLOWS)
			k = cur;	/* past that many, a flow is searched from the start */
		else
			(*ncur)++;
		*k = (struct cursor){ .flow = a, .at = 0 };
	}
	for (; k->at < c->n; k->at++)
		if (same_flow(&c->f[k->at], a))
			return &c->f[k->at++];
	return NULL;
}

static void show_difference(unsigned long *shown, const char *fmt, const struct frame *f,
			    size_t index, const char *detail)
{
	char flow[64];

	if ((*shown)++ < MAX_SHOWN)
		printf(fmt, index, flow_text(f, flow, sizeof(flow)), detail);
}

int main(int argc, char **argv)
{
	struct capture wire = { 0 }, ours = { 0 };
	unsigned long differ = 0, shown = 0, compared = 0, same_time = 0;
	static struct cursor cursors[MAX_FLOWS];
	size_t ncursors = 0;
	char detail[128];

	if (argc != 3) {
		fprintf(stderr, "usage: pcap_compare WIRE.pcap OURS.pcap\n");
		return 2;
	}
	wire.path = argv[1];
	ours.path = argv[2];
	if (load(&wire) || load(&ours))
		return 2;
	/* Each wire frame against the next unmatched frame of the same flow in ours. */
	for (size_t i = 0; i < wire.n; i++) {
		struct frame *w = &wire.f[i], *o;

		w->matched = true;
		o = next_of_flow(&ours, w, cursors, &ncursors);
		if (!o) {
			differ++;
			show_difference(&shown, "wire frame %zu (%s): %s\n", w, i + 1,
					"not in rocemu's capture");
			continue;
		}
		o->matched = true;
		compared++;
		if (o->len != w->len) {
			snprintf(detail, sizeof(detail), "%u bytes on the wire, %u captured", w->len,
				 o->len);
		} else {
			size_t b;

			for (b = 0; b < w->len && w->bytes[b] == o->bytes[b]; b++)
				;
			if (b == w->len)
				continue;
			snprintf(detail, sizeof(detail),
				 "byte %zu is 0x%02x on the wire, 0x%02x captured", b, w->bytes[b],
				 o->bytes[b]);
		}
		differ++;
		show_difference(&shown, "wire frame %zu (%s): %s\n", w, i + 1, detail);
	}
	for (size_t i = 0; i < ours.n; i++) {
		if (!ours.f[i].matched) {
			differ++;
			show_difference(&shown, "captured frame %zu (%s): %s\n", &ours.f[i], i + 1,
					"not on the wire");
		}
		if (i && ours.f[i].ns <= ours.f[i - 1].ns)
			same_time++;
	}
	if (same_time) {
		differ++;
		printf("%lu frames of rocemu's capture are not stamped after the one before\n",
		       same_time);
	}
	printf("pcap_compare: %zu frames on the wire, %zu captured, %lu compared, %lu differences\n",
	       wire.n, ours.n, compared, differ);
	for (size_t i = 0; i < wire.n; i++)
		free(wire.f[i].bytes);
	for (size_t i = 0; i < ours.n; i++)
		free(ours.f[i].bytes);
	free(wire.f);
	free(ours.f);
	return differ ? 1 : 0;
}
