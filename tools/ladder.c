/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "tools/ladder.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "net/roce/roce_hdr.h"
#include "net/roce/roce_opcode.h"
#include "net/roce/roce_text.h"

#define CM_QPN 1

/* Who sent to whom on which UDP source port: the receiving QP's number. */
struct flow {
	uint32_t me, peer;
	uint16_t sport;
	uint32_t qpn;
};

struct flows {
	struct flow *v;
	size_t n;
};

static uint32_t flow_qpn(const struct flows *f, uint32_t me, uint32_t peer, uint16_t sport)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->v[i].me == me && f->v[i].peer == peer && f->v[i].sport == sport)
			return f->v[i].qpn;
	return CAPTURE_QPN_UNKNOWN;
}

/* Each destination QP learned from the packets it received. */
static int flows_learn(const struct capture_pkts *pkts, struct flows *f)
{
	f->v = calloc(pkts->n ? pkts->n : 1, sizeof(*f->v));
	if (!f->v)
		return -ENOMEM;
	for (size_t i = 0; i < pkts->n; i++) {
		const struct capture_pkt *p = &pkts->v[i];

		if (p->destqp == CM_QPN ||
		    flow_qpn(f, p->daddr, p->saddr, p->sport) != CAPTURE_QPN_UNKNOWN)
			continue;
		f->v[f->n++] = (struct flow){ .me = p->daddr, .peer = p->saddr, .sport = p->sport,
					      .qpn = p->destqp };
	}
	return 0;
}

static int lane_of(struct ladder *l, uint32_t addr, uint32_t qpn, uint16_t sport)
{
	struct ladder_lane *lanes;
	unsigned int i;

	for (i = 0; i < l->nlanes; i++)
		if (l->lanes[i].addr == addr && l->lanes[i].qpn == qpn &&
		    (qpn != CAPTURE_QPN_UNKNOWN || l->lanes[i].sport == sport))
			return (int)i;
	lanes = realloc(l->lanes, (l->nlanes + 1) * sizeof(*lanes));
	if (!lanes)
		return -ENOMEM;
	l->lanes = lanes;
	l->lanes[l->nlanes] = (struct ladder_lane){ .addr = addr, .qpn = qpn, .sport = sport };
	return (int)l->nlanes++;
}

static enum ladder_kind kind_of(const struct capture_pkt *p)
{
	const struct rocemu_opcode_info *info = rocemu_opcode_info(p->opcode);

	if (p->mad_attr)
		return LADDER_CM;
	if (info->flags & (ROCEMU_OPF_UD | ROCEMU_OPF_UC))
		return LADDER_DATAGRAM;
	if (info->flags & ROCEMU_OPF_ACK) {
		switch (rocemu_aeth_syndrome_type(p->syndrome)) {
		case ROCEMU_AETH_RNR_NAK:
			return LADDER_RNR;
		case ROCEMU_AETH_NAK:
			return LADDER_NAK;
		default:
			return info->flags & ROCEMU_OPF_ATOMIC ? LADDER_RESPONSE : LADDER_ACK;
		}
	}
	return info->flags & ROCEMU_OPF_RESP ? LADDER_RESPONSE : LADDER_REQUEST;
}

/* The next new PSN of each pair of lanes, to tell a retransmission. */
struct next_psn {
	unsigned int from, to;
	uint32_t psn;
};

static bool retransmitted(struct next_psn *seen, size_t *nseen, const struct ladder_row *r)
{
	size_t i;

	for (i = 0; i < *nseen; i++)
		if (seen[i].from == r->from && seen[i].to == r->to)
			break;
	if (i < *nseen && rocemu_psn_diff(r->pkt->psn, seen[i].psn) < 0)
		return true;
	seen[i] = (struct next_psn){ .from = r->from, .to = r->to,
				     .psn = rocemu_psn_add(r->pkt->psn, 1) };
	if (i == *nseen)
		(*nseen)++;
	return false;
}

static void label(struct ladder_row *r)
{
	const struct capture_pkt *p = r->pkt;
	char what[64], psns[40];
	int n;

	switch (r->kind) {
	case LADDER_CM:
		snprintf(what, sizeof(what), "CM %s", rocemu_cm_attr_name(p->mad_attr));
		break;
	case LADDER_NAK:
	case LADDER_RNR:
		rocemu_aeth_text(p->syndrome, what, sizeof(what));
		break;
	default:
		snprintf(what, sizeof(what), "%s", rocemu_opcode_name(p->opcode));
	}
	if (r->count > 1)
		snprintf(psns, sizeof(psns), " \u00d7%u PSN %u..%u", r->count, p->psn, r->last_psn);
	else
		snprintf(psns, sizeof(psns), " PSN %u", p->psn);
	n = snprintf(r->label, sizeof(r->label), "%s%s", what, psns);
	if (p->paylen && n > 0 && (size_t)n < sizeof(r->label))
		n += snprintf(r->label + n, sizeof(r->label) - (size_t)n, " %u B", p->paylen);
	if (p->icrc_bad && n > 0 && (size_t)n < sizeof(r->label))
		snprintf(r->label + n, sizeof(r->label) - (size_t)n, " ICRC bad");
}

/* Alike neighbours: one arrow can stand for both. */
static bool alike(const struct ladder_row *a, const struct ladder_row *b)
{
	return a->from == b->from && a->to == b->to && a->kind == b->kind &&
	       a->pkt->opcode == b->pkt->opcode && !a->pkt->lost && !b->pkt->lost &&
	       !a->pkt->icrc_bad && !b->pkt->icrc_bad && a->kind != LADDER_CM;
}

static void condense(struct ladder *l)
{
	size_t out = 0, i;

	for (i = 0; i < l->nrows; i++) {
		if (out && alike(&l->rows[out - 1], &l->rows[i])) {
			l->rows[out - 1].count += l->rows[i].count;
			l->rows[out - 1].last_psn = l->rows[i].pkt->psn;
			l->condensed += l->rows[i].count;
			continue;
		}
		l->rows[out++] = l->rows[i];
	}
	l->nrows = out;
	for (i = LADDER_MAX_ROWS; i < l->nrows; i++)
		l->cut += l->rows[i].count;
	if (l->nrows > LADDER_MAX_ROWS)
		l->nrows = LADDER_MAX_ROWS;
}

int ladder_build(const struct capture_pkts *pkts, struct ladder *l)
{
	struct next_psn *seen = calloc(pkts->n ? pkts->n : 1, sizeof(*seen));
	struct flows flows = { 0 };
	size_t i, nseen = 0;
	int ret = seen ? flows_learn(pkts, &flows) : -ENOMEM;

	memset(l, 0, sizeof(*l));
	l->rows = ret ? NULL : calloc(pkts->n ? pkts->n : 1, sizeof(*l->rows));
	if (!ret && !l->rows)
		ret = -ENOMEM;
	for (i = 0; !ret && i < pkts->n; i++) {
		const struct capture_pkt *p = &pkts->v[i];
		struct ladder_row *r = &l->rows[l->nrows];
		uint32_t src_qpn = p->srcqp != CAPTURE_QPN_UNKNOWN ? p->srcqp :
				   flow_qpn(&flows, p->saddr, p->daddr, p->sport);
		int from = lane_of(l, p->saddr, src_qpn, p->sport);
		int to = from < 0 ? from : lane_of(l, p->daddr, p->destqp, 0);

		if (to < 0) {
			ret = to;
			break;
		}
		*r = (struct ladder_row){ .pkt = p, .from = (unsigned int)from, .to = (unsigned int)to,
					  .kind = kind_of(p), .count = 1, .last_psn = p->psn };
		if (r->kind == LADDER_REQUEST && retransmitted(seen, &nseen, r))
			r->kind = LADDER_RETRANSMIT;
		l->nrows++;
	}
	l->packets = pkts->n;
	if (!ret && l->nrows > LADDER_MAX_ROWS)
		condense(l);
	for (i = 0; !ret && i < l->nrows; i++)
		label(&l->rows[i]);
	free(seen);
	free(flows.v);
	if (ret)
		ladder_free(l);
	return ret;
}

void ladder_free(struct ladder *l)
{
	free(l->lanes);
	free(l->rows);
	memset(l, 0, sizeof(*l));
}

int ladder_command(int argc, char **argv)
{
	const char *out_path = NULL;
	const char **inputs = calloc(argc > 0 ? (size_t)argc : 1, sizeof(*inputs));
	struct capture_pkts pkts;
	struct ladder l;
	unsigned int n = 0;
	char err[512];
	FILE *out;
	int i, ret;

	for (i = 0; inputs && i < argc; i++) {
		if (!strcmp(argv[i], "-o") && i + 1 < argc)
			out_path = argv[++i];
		else
			inputs[n++] = argv[i];
	}
	if (!inputs || !n || !out_path) {
		fprintf(stderr, "usage: rocemu ladder FILE.pcap... -o FILE.svg\n");
		free(inputs);
		return 2;
	}
	ret = capture_read(inputs, n, &pkts, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "rocemu: ladder: %s\n", err);
		free(inputs);
		return 1;
	}
	ret = ladder_build(&pkts, &l);
	out = ret ? NULL : fopen(out_path, "w");
	if (out) {
		ladder_svg(&l, inputs, n, out);
		ret = fclose(out) ? -errno : 0;
	} else if (!ret) {
		ret = -errno;
	}
	if (ret)
		fprintf(stderr, "rocemu: ladder: %s: %s\n", out_path, strerror(-ret));
	else
		printf("%s: %zu packets, %u lanes%s\n", out_path, l.packets, l.nlanes,
		       l.condensed || l.cut ? " (condensed)" : "");
	ladder_free(&l);
	capture_free(&pkts);
	free(inputs);
	return ret ? 1 : 0;
}
