/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "tools/capture_read.h"

#include <errno.h>
#include <net/ethernet.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/roce/icrc.h"
#include "net/roce/roce_hdr.h"
#include "net/roce/roce_opcode.h"
#include "net/roce/roce_text.h"

#define ROCEV2_PORT 4791
#define CM_QPN 1

/* A packet as one capture holds it: sent (before faults) or received. */
struct record {
	struct capture_pkt pkt;
	uint64_t ns;		/* capture time since the epoch: orders copies exactly */
	unsigned int file;
	long pair;		/* index of the other capture's copy, or -1 */
};

struct records {
	struct record *v;
	size_t n, cap;
};

/* Addresses a capture's packets show as its own (sent from or received at), counted. */
#define OWNER_SLOTS 8
struct owner_votes {
	uint32_t addr[OWNER_SLOTS];
	unsigned int count[OWNER_SLOTS];
};

static int push(struct records *r, const struct capture_pkt *pkt, uint64_t ns, unsigned int file)
{
	if (r->n == r->cap) {
		size_t grown = r->cap ? r->cap * 2 : 1024;
		struct record *v = realloc(r->v, grown * sizeof(*v));

		if (!v)
			return -ENOMEM;
		r->v = v;
		r->cap = grown;
	}
	r->v[r->n++] = (struct record){ .pkt = *pkt, .ns = ns, .file = file, .pair = -1 };
	return 0;
}

/*
 * Decode one Ethernet frame of len bytes captured in its first caplen; false
 * when it is no RoCEv2 packet or its headers were cut. A cut frame's ICRC is
 * not checked (icrc_bad false).
 */
static bool decode(const uint8_t *f, size_t caplen, size_t len, struct capture_pkt *pkt)
{
	const size_t l3 = sizeof(struct ether_header), l4 = l3 + sizeof(struct iphdr),
		     bth_at = l4 + sizeof(struct udphdr);
	const struct rocemu_opcode_info *info;
	struct ether_header eth;
	struct iphdr ip;
	struct udphdr udp;
	const uint8_t *bth = f + bth_at;
	size_t ib_len, kept;
	ssize_t paylen;

	if (caplen < bth_at + ROCEMU_BTH_BYTES || caplen > len ||
	    len < bth_at + ROCEMU_BTH_BYTES + ROCEMU_ICRC_BYTES)
		return false;
	memcpy(&eth, f, sizeof(eth));
	memcpy(&ip, f + l3, sizeof(ip));
	memcpy(&udp, f + l4, sizeof(udp));
	if (ntohs(eth.ether_type) != ETHERTYPE_IP || ip.ihl != 5 || ip.protocol != IPPROTO_UDP ||
	    ntohs(udp.dest) != ROCEV2_PORT || ntohs(udp.len) < sizeof(udp) ||
	    bth_at - sizeof(udp) + ntohs(udp.len) > len)
		return false;
	ib_len = ntohs(udp.len) - sizeof(udp);
	paylen = rocemu_pkt_payload_len(bth, ib_len);
	info = rocemu_opcode_info(rocemu_bth_opcode(bth));
	if (!info || paylen < 0 || caplen < bth_at + info->length)
		return false;
	memset(pkt, 0, sizeof(*pkt));
	pkt->saddr = ip.saddr;
	pkt->daddr = ip.daddr;
	pkt->sport = ntohs(udp.source);
	pkt->opcode = rocemu_bth_opcode(bth);
	pkt->destqp = rocemu_bth_destqp(bth);
	pkt->psn = rocemu_bth_psn(bth);
	pkt->paylen = (uint32_t)paylen;
	pkt->srcqp = info->hdr_mask & ROCEMU_HDRM_DETH ?
		rocemu_deth_src_qp(bth + info->offset[ROCEMU_HDR_DETH]) : CAPTURE_QPN_UNKNOWN;
	pkt->has_aeth = info->hdr_mask & ROCEMU_HDRM_AETH;
	if (pkt->has_aeth)
		pkt->syndrome = rocemu_aeth_syndrome(bth + info->offset[ROCEMU_HDR_AETH]);
	kept = caplen - bth_at - info->length;
	if (pkt->destqp == CM_QPN)
		pkt->mad_attr = rocemu_mad_attr(bth + info->length,
						(size_t)paylen < kept ? (size_t)paylen : kept);
	pkt->icrc_bad = caplen == len && rocemu_icrc_check_v4_hdrs(&ip, &udp, bth, ib_len) != 0;
	return true;
}

static int read_file(const char *path, unsigned int file, struct records *out, char *err,
		     size_t errlen)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *frame;
	struct capture_pkt pkt;
	pcap_t *in;
	int ret = 0;

	/* Nanoseconds: a copy received within a microsecond of its sending stays after it. */
	in = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, errbuf);
	if (!in) {
		snprintf(err, errlen, "%s", errbuf);
		return -EINVAL;
	}
	if (pcap_datalink(in) != DLT_EN10MB) {
		snprintf(err, errlen, "%s: not an Ethernet capture", path);
		pcap_close(in);
		return -EINVAL;
	}
	/* A capture cut short ends where it ends; what came before stands. */
	while (!ret && pcap_next_ex(in, &h, &frame) == 1) {
		if (!decode(frame, h->caplen, h->len, &pkt))
			continue;
		pkt.t = (double)h->ts.tv_sec + (double)h->ts.tv_usec / 1e9;
		ret = push(out, &pkt, (uint64_t)h->ts.tv_sec * 1000000000u + (uint64_t)h->ts.tv_usec,
			   file);
	}
	pcap_close(in);
	if (ret)
		snprintf(err, errlen, "%s: out of memory", path);
	return ret;
}

/* Order of what makes two captured copies one packet (every header field but time). */
static int identity_cmp(const struct capture_pkt *x, const struct capture_pkt *y)
{
	const uint64_t kx[] = { x->saddr, x->daddr, x->sport, x->opcode, x->destqp, x->psn, x->paylen };
	const uint64_t ky[] = { y->saddr, y->daddr, y->sport, y->opcode, y->destqp, y->psn, y->paylen };

	for (size_t i = 0; i < sizeof(kx) / sizeof(kx[0]); i++)
		if (kx[i] != ky[i])
			return kx[i] < ky[i] ? -1 : 1;
	return 0;
}

/* Identity, then time: copies of one packet end up side by side, oldest first. */
static int by_identity(const void *a, const void *b)
{
	const struct record *x = a, *y = b;
	int c = identity_cmp(&x->pkt, &y->pkt);

	return c ? c : (x->ns > y->ns) - (x->ns < y->ns);
}

static void vote(struct owner_votes *v, uint32_t addr)
{
	for (unsigned int k = 0; k < OWNER_SLOTS; k++) {
		if (v->count[k] && v->addr[k] != addr)
			continue;
		v->addr[k] = addr;
		v->count[k]++;
		return;
	}
}

static uint32_t owner(const struct owner_votes *v)
{
	unsigned int best = 0;

	for (unsigned int k = 1; k < OWNER_SLOTS; k++)
		if (v->count[k] > v->count[best])
			best = k;
	return v->count[best] ? v->addr[best] : 0;
}

/* The latest copy before j of j's packet, in another capture and not yet paired; -1 if none. */
static long latest_unpaired(const struct records *r, size_t group, size_t j)
{
	for (size_t k = j; k-- > group;)
		if (r->v[k].pair < 0 && r->v[k].file != r->v[j].file)
			return (long)k;
	return -1;
}

/*
 * Pair each copy with the latest unpaired copy of the same packet in
 * another capture (the sender captures first, and a retransmission is a
 * later copy); each pair votes for whose address each capture holds.
 */
static void pair_copies(struct records *r, struct owner_votes *votes)
{
	size_t group, i, j;
	long k;

	for (group = 0; group < r->n; group = i) {
		for (i = group + 1; i < r->n && !identity_cmp(&r->v[i].pkt, &r->v[group].pkt); i++)
			;
		for (j = group + 1; j < i; j++) {
			k = latest_unpaired(r, group, j);
			if (k < 0)
				continue;
			r->v[k].pair = (long)j;
			r->v[j].pair = k;
			vote(&votes[r->v[k].file], r->v[k].pkt.saddr);
			vote(&votes[r->v[j].file], r->v[j].pkt.daddr);
		}
	}
}

static int by_time(const void *a, const void *b)
{
	double d = ((const struct capture_pkt *)a)->t - ((const struct capture_pkt *)b)->t;

	return (d > 0) - (d < 0);
}

int capture_read(const char *const *paths, unsigned int nfiles, struct capture_pkts *out,
		 char *err, size_t errlen)
{
	struct owner_votes *votes = calloc(nfiles ? nfiles : 1, sizeof(*votes));
	struct records r = { 0 };
	double t0 = 0;
	unsigned int f, g;
	size_t i;
	int ret = votes ? 0 : -ENOMEM;

	memset(out, 0, sizeof(*out));
	for (f = 0; f < nfiles && !ret; f++)
		ret = read_file(paths[f], f, &r, err, errlen);
	if (!ret && r.n) {
		qsort(r.v, r.n, sizeof(*r.v), by_identity);
		pair_copies(&r, votes);
		out->v = malloc(r.n * sizeof(*out->v));
		ret = out->v ? 0 : -ENOMEM;
	}
	for (i = 0; !ret && i < r.n; i++) {
		struct record *rec = &r.v[i];

		/* Each packet once: a pair by its sender's copy. */
		if (rec->pair >= 0 && r.v[rec->pair].ns < rec->ns)
			continue;
		/* Alone in its sender's capture, while its receiver's capture was given: lost. */
		if (rec->pair < 0 && nfiles > 1 && owner(&votes[rec->file]) == rec->pkt.saddr)
			for (g = 0; g < nfiles; g++)
				rec->pkt.lost |= g != rec->file && owner(&votes[g]) == rec->pkt.daddr;
		out->v[out->n++] = rec->pkt;
	}
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	free(r.v);
	free(votes);
	if (ret) {
		capture_free(out);
		return ret;
	}
	qsort(out->v, out->n, sizeof(*out->v), by_time);
	if (out->n)
		t0 = out->v[0].t;
	for (i = 0; i < out->n; i++)
		out->v[i].t -= t0;
	return 0;
}

void capture_free(struct capture_pkts *pkts)
{
	free(pkts->v);
	pkts->v = NULL;
	pkts->n = 0;
}
