/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * pcap_check FILE...: every frame of each capture is a whole RoCEv2 packet
 * as a wire would carry it: Ethernet II with IPv4, an IPv4 header whose
 * checksum holds and whose total length is the frame's, UDP to port 4791
 * whose length is the IPv4 payload's and whose checksum holds, a BTH of a
 * known opcode with headers and pad that fit the length, and an ICRC that
 * recomputes. The sums are computed here, apart from the writer's code.
 * A record cut at the capture's snap length (caplen < len) is checked as
 * far as it goes: the lengths against the whole frame's, the headers it
 * holds; its UDP checksum and ICRC, which need the whole packet, are not.
 * Prints per file the frames checked, how many were cut and the opcodes
 * seen; exit 1 if any frame fails (each failure named), 2 on usage or an
 * unreadable file.
 */
#include <arpa/inet.h>
#include <net/ethernet.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <pcap/pcap.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "net/roce/icrc.h"
#include "net/roce/roce_hdr.h"
#include "net/roce/roce_opcode.h"

#define ROCEV2_PORT 4791
#define ETH_BYTES sizeof(struct ether_header)
#define IP_BYTES sizeof(struct iphdr)
#define UDP_BYTES sizeof(struct udphdr)

/* The one's complement sum of len bytes as 16-bit big-endian words, not yet inverted. */
static uint32_t ones_sum(uint32_t sum, const uint8_t *p, size_t len)
{
	for (; len > 1; p += 2, len -= 2)
		sum += (uint32_t)p[0] << 8 | p[1];
	if (len)
		sum += (uint32_t)p[0] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum;
}

/*
 * What is wrong with frame f of len bytes captured in its first caplen, or
 * NULL; *opcode gets its BTH opcode (0 when cut before it).
 */
static const char *frame_fault(const uint8_t *f, size_t caplen, size_t len, uint8_t *opcode)
{
	const uint8_t *ip = f + ETH_BYTES, *udp = ip + IP_BYTES, *bth = udp + UDP_BYTES;
	struct ether_header eth;
	struct iphdr iph;
	struct udphdr udph;
	uint16_t ip_len, udp_len;
	uint8_t pseudo[12];

	if (len < ETH_BYTES + IP_BYTES + UDP_BYTES + ROCEMU_BTH_BYTES + ROCEMU_ICRC_BYTES)
		return "shorter than the headers of a RoCEv2 packet";
	if (caplen > len)
		return "caplen greater than len";
	if (caplen < ETH_BYTES + IP_BYTES + UDP_BYTES + ROCEMU_BTH_BYTES)
		return NULL;	/* cut before its BTH: nothing whole to check */
	memcpy(&eth, f, sizeof(eth));
	if (ntohs(eth.ether_type) != ETHERTYPE_IP)
		return "not IPv4";
	if (ip[0] != 0x45 || ip[9] != IPPROTO_UDP)
		return "not an IPv4 header of 20 bytes carrying UDP";
	if (ones_sum(0, ip, IP_BYTES) != 0xffff)
		return "IPv4 header checksum";
	ip_len = (uint16_t)(ip[2] << 8 | ip[3]);
	if (ip_len != len - ETH_BYTES)
		return "IPv4 total length is not the frame's";
	udp_len = (uint16_t)(udp[4] << 8 | udp[5]);
	if (udp_len != ip_len - IP_BYTES)
		return "UDP length is not the IPv4 payload's";
	if ((udp[2] << 8 | udp[3]) != ROCEV2_PORT)
		return "UDP destination port is not 4791";
	memcpy(pseudo, ip + 12, 8);
	pseudo[8] = 0;
	pseudo[9] = IPPROTO_UDP;
	pseudo[10] = udp[4];
	pseudo[11] = udp[5];
	*opcode = rocemu_bth_opcode(bth);
	if (rocemu_pkt_payload_len(bth, udp_len - UDP_BYTES) < 0)
		return "BTH: unknown opcode, or headers and pad that do not fit";
	if (caplen < len)
		return NULL;
	if ((udp[6] | udp[7]) && ones_sum(ones_sum(0, pseudo, sizeof(pseudo)), udp, udp_len) != 0xffff)
		return "UDP checksum";
	/* Over the IPv4 header the frame carries: its ID and flags as they are. */
	memcpy(&iph, ip, sizeof(iph));
	memcpy(&udph, udp, sizeof(udph));
	if (rocemu_icrc_check_v4_hdrs(&iph, &udph, bth, udp_len - UDP_BYTES))
		return "ICRC";
	return NULL;
}

static int check_file(const char *path)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	unsigned long frames = 0, bad = 0, cut = 0, seen[256] = { 0 };
	struct pcap_pkthdr *h;
	const u_char *f;
	pcap_t *in = pcap_open_offline(path, errbuf);
	int rc;

	if (!in) {
		fprintf(stderr, "pcap_check: %s\n", errbuf);
		return 2;
	}
	while ((rc = pcap_next_ex(in, &h, &f)) == 1) {
		uint8_t opcode = 0;
		const char *why;

		frames++;
		cut += h->caplen < h->len;
		why = frame_fault(f, h->caplen, h->len, &opcode);
		if (why) {
			bad++;
			printf("%s: frame %lu: %s\n", path, frames, why);
			continue;
		}
		if (h->caplen >= ETH_BYTES + IP_BYTES + UDP_BYTES + ROCEMU_BTH_BYTES)
			seen[opcode]++;
	}
	if (rc != PCAP_ERROR_BREAK) {
		printf("%s: cut short after frame %lu: %s\n", path, frames, pcap_geterr(in));
		bad++;
	}
	pcap_close(in);
	printf("%s: %lu frames, %lu bad, %lu cut (UDP checksum and ICRC unchecked);", path, frames,
	       bad, cut);
	for (unsigned int op = 0; op < 256; op++)
		if (seen[op])
			printf(" %s x%lu;", rocemu_opcode_name((uint8_t)op), seen[op]);
	printf("\n");
	return bad || !frames ? 1 : 0;
}

int main(int argc, char **argv)
{
	int worst = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: pcap_check FILE.pcap...\n");
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		int rc = check_file(argv[i]);

		if (rc > worst)
			worst = rc;
	}
	return worst;
}
