/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The ladder as SVG: lanes across, time down, one coloured arrow per row. */
#include <arpa/inet.h>
#include <string.h>

#include "tools/ladder.h"

#define LEFT 110		/* the time column */
#define LANE_W 340
#define TOP 80
#define ROW_H 24
#define FOOT 90			/* legend and notes */

static const struct {
	const char *name, *colour, *dash;
} kinds[LADDER_KIND_COUNT] = {
	[LADDER_REQUEST] = { "request", "#1565c0", "" },
	[LADDER_RESPONSE] = { "response", "#00897b", "" },
	[LADDER_ACK] = { "ack", "#2e7d32", "" },
	[LADDER_NAK] = { "nak", "#c62828", "" },
	[LADDER_RNR] = { "rnr", "#ef6c00", "" },
	[LADDER_RETRANSMIT] = { "retransmit", "#8e24aa", " stroke-dasharray=\"6 3\"" },
	[LADDER_CM] = { "cm", "#424242", "" },
	[LADDER_DATAGRAM] = { "datagram", "#6d4c41", "" },
};

static void xml_text(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '<')
			fputs("&lt;", out);
		else if (*s == '>')
			fputs("&gt;", out);
		else if (*s == '&')
			fputs("&amp;", out);
		else if (*s == '"')
			fputs("&quot;", out);
		else
			fputc(*s, out);
	}
}

static int lane_x(unsigned int lane)
{
	return LEFT + LANE_W / 2 + (int)lane * LANE_W;
}

static void header(const struct ladder *l, const char *const *captures, unsigned int n, FILE *out,
		   int width, int height)
{
	char addr[INET_ADDRSTRLEN];
	unsigned int i;
	int k;

	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\" font-family=\"DejaVu Sans Mono, monospace\">\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n<defs>\n",
		width, height, width, height);
	for (k = 0; k < LADDER_KIND_COUNT; k++)
		fprintf(out, "<marker id=\"arrow-%s\" markerUnits=\"userSpaceOnUse\" markerWidth=\"8\" "
			"markerHeight=\"8\" refX=\"8\" "
			"refY=\"4\" orient=\"auto\"><path d=\"M0,0 L8,4 L0,8 z\" fill=\"%s\"/></marker>\n",
			kinds[k].name, kinds[k].colour);
	fputs("</defs>\n<text x=\"10\" y=\"22\" font-size=\"14\" font-weight=\"bold\">rocemu ladder: ", out);
	for (i = 0; i < n; i++) {
		const char *base = strrchr(captures[i], '/');

		fputs(i ? " + " : "", out);
		xml_text(out, base ? base + 1 : captures[i]);
	}
	fputs("</text>\n", out);
	for (i = 0; i < l->nlanes; i++) {
		const struct ladder_lane *lane = &l->lanes[i];
		struct in_addr a = { .s_addr = lane->addr };

		inet_ntop(AF_INET, &a, addr, sizeof(addr));
		fprintf(out, "<text x=\"%d\" y=\"48\" font-size=\"12\" text-anchor=\"middle\">%s</text>\n",
			lane_x(i), addr);
		if (lane->qpn == CAPTURE_QPN_UNKNOWN)
			fprintf(out, "<text x=\"%d\" y=\"64\" font-size=\"12\" text-anchor=\"middle\">"
				"UDP port %u</text>\n", lane_x(i), lane->sport);
		else
			fprintf(out, "<text x=\"%d\" y=\"64\" font-size=\"12\" text-anchor=\"middle\">"
				"QP 0x%06x</text>\n", lane_x(i), lane->qpn);
		fprintf(out, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#9e9e9e\" "
			"stroke-dasharray=\"4 4\"/>\n", lane_x(i), TOP - 8, lane_x(i), height - FOOT + 10);
	}
}

static void arrow(const struct ladder_row *r, FILE *out, int y)
{
	int x1 = lane_x(r->from), x2 = lane_x(r->to), mid = (x1 + x2) / 2;
	const char *name = kinds[r->kind].name, *colour = kinds[r->kind].colour;

	fprintf(out, "<g class=\"%s%s\">\n", name, r->pkt->lost ? " lost" : "");
	fprintf(out, "<text class=\"time\" x=\"8\" y=\"%d\" font-size=\"10\" fill=\"#757575\">%.3f ms</text>\n",
		y + 4, r->pkt->t * 1000.0);
	if (x1 == x2) {
		fprintf(out, "<path d=\"M%d,%d h40 v8 h-38\" fill=\"none\" stroke=\"%s\"%s "
			"marker-end=\"url(#arrow-%s)\"/>\n", x1, y, colour, kinds[r->kind].dash, name);
		mid = x1 + 60;
	} else if (r->pkt->lost) {
		fprintf(out, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\"%s/>\n"
			"<text x=\"%d\" y=\"%d\" font-size=\"14\" fill=\"#c62828\" "
			"text-anchor=\"middle\">\u2715</text>\n",
			x1, y, mid, y + 3, colour, kinds[r->kind].dash, mid, y + 8);
	} else {
		fprintf(out, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" "
			"stroke-width=\"%s\"%s marker-end=\"url(#arrow-%s)\"/>\n",
			x1, y, x2, y + 6, colour, r->count > 1 ? "2.5" : "1.3", kinds[r->kind].dash,
			name);
	}
	fprintf(out, "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"%s\" fill=\"%s\">",
		x1 == x2 ? mid : (x1 + mid) / 2 + (x2 - x1) / 4, y - 3, x1 == x2 ? "start" : "middle",
		colour);
	xml_text(out, r->label);
	fputs(r->pkt->lost ? " (lost)</text>\n</g>\n" : "</text>\n</g>\n", out);
}

static void footer(const struct ladder *l, FILE *out, int height)
{
	int y = height - FOOT + 34, x = 10, k;

	for (k = 0; k < LADDER_KIND_COUNT; k++, x += 120)
		fprintf(out, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" "
			"stroke-width=\"2\"%s/><text x=\"%d\" y=\"%d\" font-size=\"11\">%s</text>\n",
			x, y, x + 30, y, kinds[k].colour, kinds[k].dash, x + 36, y + 4, kinds[k].name);
	fprintf(out, "<text x=\"10\" y=\"%d\" font-size=\"11\" fill=\"#424242\">%zu packets",
		y + 26, l->packets);
	if (l->condensed)
		fprintf(out, "; runs of alike packets drawn as one thick arrow (\u00d7N), %zu packets in them",
			l->condensed);
	if (l->cut)
		fprintf(out, "; the last %zu packets not drawn (over %d arrows)", l->cut,
			LADDER_MAX_ROWS);
	fputs("</text>\n</svg>\n", out);
}

void ladder_svg(const struct ladder *l, const char *const *captures, unsigned int n, FILE *out)
{
	int width = LEFT + (int)(l->nlanes ? l->nlanes : 1) * LANE_W + 20;
	int height = TOP + (int)l->nrows * ROW_H + FOOT;
	size_t i;

	if (width < LEFT + 8 * 120)
		width = LEFT + 8 * 120;
	header(l, captures, n, out, width, height);
	for (i = 0; i < l->nrows; i++)
		arrow(&l->rows[i], out, TOP + 12 + (int)i * ROW_H);
	footer(l, out, height);
}
