/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * `rocemu ladder FILE.pcap... -o FILE.svg`: a sequence (ladder) diagram of
 * captures. One lane per QP (address and QPN; a QP that never received is
 * named by its UDP source port), one arrow per packet, time running down.
 * Long runs of alike packets are condensed into one arrow with a count.
 */
#ifndef ROCEMU_TOOLS_LADDER_H
#define ROCEMU_TOOLS_LADDER_H

#include <stdint.h>
#include <stdio.h>

#include "tools/capture_read.h"

#define LADDER_MAX_ROWS 300	/* beyond this, runs are condensed, then the rest cut */

/* What an arrow shows, by colour and style. */
enum ladder_kind {
	LADDER_REQUEST,		/* SEND, WRITE, READ request, atomic */
	LADDER_RESPONSE,	/* READ response, atomic acknowledge */
	LADDER_ACK,
	LADDER_NAK,
	LADDER_RNR,
	LADDER_RETRANSMIT,	/* a request again at a PSN already sent */
	LADDER_CM,		/* a CM MAD on QP1 */
	LADDER_DATAGRAM,	/* UD and UC packets */
	LADDER_KIND_COUNT,
};

struct ladder_lane {
	uint32_t addr;		/* network order */
	uint32_t qpn;		/* CAPTURE_QPN_UNKNOWN: named by sport */
	uint16_t sport;
};

struct ladder_row {
	const struct capture_pkt *pkt;	/* the first packet of the arrow */
	unsigned int from, to;		/* lanes */
	enum ladder_kind kind;
	unsigned int count;		/* packets this arrow stands for */
	uint32_t last_psn;
	char label[112];
};

struct ladder {
	struct ladder_lane *lanes;
	unsigned int nlanes;
	struct ladder_row *rows;
	size_t nrows;
	size_t packets, condensed, cut;	/* all packets; in runs; not drawn */
};

/* Build the ladder of pkts; 0 or -ENOMEM. */
int ladder_build(const struct capture_pkts *pkts, struct ladder *l);
void ladder_free(struct ladder *l);

/* Write l as SVG to out, titled with the names of the n captures. */
void ladder_svg(const struct ladder *l, const char *const *captures, unsigned int n, FILE *out);

/* The `rocemu ladder` command: argv holds FILE.pcap... -o FILE.svg. */
int ladder_command(int argc, char **argv);

#endif /* ROCEMU_TOOLS_LADDER_H */
