/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * RoCEv2 packets of pcap files, decoded for pictures: one or several
 * devices' captures merged into one time line, each packet once. A packet
 * found in its sender's capture and not in the receiver's (both given) is
 * marked lost: sent captures are taken before fault injection.
 */
#ifndef ROCEMU_TOOLS_CAPTURE_READ_H
#define ROCEMU_TOOLS_CAPTURE_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CAPTURE_QPN_UNKNOWN 0xffffffffu

struct capture_pkt {
	double t;			/* seconds since the first packet */
	uint32_t saddr, daddr;		/* network order */
	uint16_t sport;			/* host order */
	uint8_t opcode;
	uint32_t destqp, psn;
	uint32_t srcqp;			/* DETH's source QP, else CAPTURE_QPN_UNKNOWN */
	uint32_t paylen;		/* payload bytes */
	bool has_aeth;
	uint8_t syndrome;
	uint16_t mad_attr;		/* attribute of a CM MAD (QP1), else 0 */
	bool icrc_bad;
	bool lost;			/* in its sender's capture, not in its receiver's */
};

struct capture_pkts {
	struct capture_pkt *v;
	size_t n;
};

/*
 * Read the RoCEv2 packets of the nfiles captures in paths into out (time
 * order). Returns 0, or -errno with a one-line reason in err.
 */
int capture_read(const char *const *paths, unsigned int nfiles, struct capture_pkts *out,
		 char *err, size_t errlen);

void capture_free(struct capture_pkts *pkts);

#endif /* ROCEMU_TOOLS_CAPTURE_READ_H */
