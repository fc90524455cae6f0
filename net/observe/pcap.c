/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* pcap writer: datagrams framed as Ethernet II / IPv4 / UDP (see pcap.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/ethernet.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <pcap/pcap.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "net/observe/pcap.h"
#include "net/observe/pcap_sink.h"

#define FRAME_HDR_BYTES ROCEMU_PCAP_FRAME_HDR_BYTES
_Static_assert(FRAME_HDR_BYTES == sizeof(struct ether_header) + sizeof(struct iphdr) +
	       sizeof(struct udphdr), "Ethernet, IPv4 and UDP headers");
#define MAX_UDP_PAYLOAD (65535 - sizeof(struct iphdr) - sizeof(struct udphdr))

#define PCAP_MAGIC_NS 0xa1b23c4du	/* times in nanoseconds */
_Static_assert(ROCEMU_PCAP_RECORD_HDR_BYTES == 4 * sizeof(uint32_t) &&
	       ROCEMU_PCAP_RECORD_CAPLEN_AT == 2 * sizeof(uint32_t),
	       "a record header is four words, the bytes kept the third");
#define BATCH_BYTES (1u << 20)

struct rocemu_pcap {
	int fd;			/* the pipe to the writer process (pcap_sink.c), -1 once it failed */
	pid_t sink;		/* that process */
	int err;		/* -errno of the write that failed: the file ends at the last whole record */
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

/* Replacing an existing name is safe only where no other user can place one: a directory of ours. */
static bool dir_only_ours(const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	struct stat st;
	int n;

	n = slash ? snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path + 1), path)
		  : snprintf(dir, sizeof(dir), ".");
	if (n < 0 || (size_t)n >= sizeof(dir) || stat(dir, &st))
		return false;
	return S_ISDIR(st.st_mode) && st.st_uid == geteuid() && !(st.st_mode & (S_IWGRP | S_IWOTH));
}

/*
 * A new capture file, mode 0600 (it holds keys, addresses and PSNs): never
 * through a symbolic link, and an existing file is replaced only as above.
 */
static int capture_file_open(const char *path)
{
	const int flags = O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC;
	struct stat st;
	int fd;

	fd = open(path, flags | O_EXCL, 0600);
	if (fd >= 0 || errno != EEXIST)
		return fd < 0 ? -errno : fd;
	if (!dir_only_ours(path))
		return -EEXIST;
	fd = open(path, flags, 0600);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    fchmod(fd, 0600) || ftruncate(fd, 0)) {
		close(fd);
		return -EEXIST;
	}
	return fd;
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
	fd = capture_file_open(path);
	err = fd < 0 ? -fd : 0;
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

/* The project's MAC for IPv4 a.b.c.d: 02:00:a:b:c:d. */
static void mac_from_ipv4(uint8_t mac[ETH_ALEN], uint32_t addr_be)
{
	mac[0] = 0x02;
	mac[1] = 0x00;
	memcpy(&mac[2], &addr_be, 4);
}

void rocemu_pcap_frame_headers(uint8_t *frame, const struct rocemu_ipv4_udp *flow,
			       const struct rocemu_ipv4_fields *ip, const uint8_t *udp_payload,
			       size_t len)
{
	struct ether_header eth = { .ether_type = htons(ETHERTYPE_IP) };
	struct iphdr iph;
	struct udphdr udp = { .source = flow->sport, .dest = flow->dport,
			      .len = htons((uint16_t)(sizeof(struct udphdr) + len)) };

	mac_from_ipv4(eth.ether_dhost, flow->daddr);
	mac_from_ipv4(eth.ether_shost, flow->saddr);
	rocemu_ipv4_header(&iph, flow, ip, len);
	if (udp_payload)
		udp.check = rocemu_udp_checksum(flow, &udp, udp_payload, len);
	memcpy(frame, &eth, sizeof(eth));
	memcpy(frame + sizeof(eth), &iph, sizeof(iph));
	memcpy(frame + sizeof(eth) + sizeof(iph), &udp, sizeof(udp));
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * Room in the batch for the record of a frame_len-byte frame stamped ns,
 * its header written: *at is where its *caplen bytes go (the snap length's).
 */
static int record_start(struct rocemu_pcap *p, uint32_t frame_len, uint64_t ns, uint8_t **at,
			uint32_t *caplen)
{
	uint32_t rec[4], kept = p->snaplen && p->snaplen < frame_len ? p->snaplen : frame_len;
	int ret;

	if (p->used + ROCEMU_PCAP_RECORD_HDR_BYTES + kept > sizeof(p->batch)) {
		ret = rocemu_pcap_flush(p);
		if (ret)
			return ret;
	}
	rec[0] = (uint32_t)(ns / 1000000000u);
	rec[1] = (uint32_t)(ns % 1000000000u);
	rec[2] = kept;
	rec[3] = frame_len;
	memcpy(p->batch + p->used, rec, sizeof(rec));
	*at = p->batch + p->used + ROCEMU_PCAP_RECORD_HDR_BYTES;
	*caplen = kept;
	/* Built in place: the batch only ever holds whole records. */
	p->used += ROCEMU_PCAP_RECORD_HDR_BYTES + kept;
	return 0;
}

/* Append the record of one datagram of run with IPv4 fields ip, stamped ns, cut at the snap length. */
static int write_record(struct rocemu_pcap *p, const struct rocemu_pcap_run *run,
			const struct rocemu_ipv4_fields *ip, const uint8_t *udp_payload,
			size_t len, uint64_t ns)
{
	uint32_t caplen, frame_len = (uint32_t)(FRAME_HDR_BYTES + len);
	const uint8_t *summed;
	uint8_t *at;
	int ret;

	ret = record_start(p, frame_len, ns, &at, &caplen);
	if (ret)
		return ret;
	/* A cut datagram's UDP checksum would be summed over bytes the record does not hold: none. */
	summed = caplen == frame_len && !run->udp_check_zero ? udp_payload : NULL;
	if (caplen >= FRAME_HDR_BYTES) {
		rocemu_pcap_frame_headers(at, run->flow, ip, summed, len);
		memcpy(at + FRAME_HDR_BYTES, udp_payload, caplen - FRAME_HDR_BYTES);
	} else {
		uint8_t hdrs[FRAME_HDR_BYTES];

		rocemu_pcap_frame_headers(hdrs, run->flow, ip, summed, len);
		memcpy(at, hdrs, caplen);
	}
	return 0;
}

/* A clock stepped backwards also flushes, so a step cannot stall the file. */
static int flush_when_due(struct rocemu_pcap *p, uint64_t now)
{
	if (now - p->last_flush_ns >= ROCEMU_PCAP_FLUSH_NS || now < p->last_flush_ns)
		return rocemu_pcap_flush(p);
	return 0;
}

/* ns, or the next nanosecond after the last record's: no record goes before another. */
static uint64_t record_ns(struct rocemu_pcap *p, uint64_t ns)
{
	p->last_ns = ns > p->last_ns ? ns : p->last_ns + 1;
	return p->last_ns;
}

int rocemu_pcap_write_frame(struct rocemu_pcap *p, const uint8_t *frame, size_t len)
{
	uint64_t now;
	uint32_t caplen;
	uint8_t *at;
	int ret;

	if (!p || (!frame && len))
		return -EINVAL;
	if (len > ROCEMU_PCAP_SNAPLEN_MAX)
		return -EMSGSIZE;
	if (p->err)
		return p->err;
	now = now_ns();
	ret = record_start(p, (uint32_t)len, record_ns(p, now), &at, &caplen);
	if (ret)
		return ret;
	memcpy(at, frame, caplen);
	return flush_when_due(p, now);
}

/* A frame's bits on the link: preamble and start delimiter, the frame, its FCS
 * and the gap before the next (IEEE 802.3). */
uint64_t rocemu_pcap_frame_ps(size_t udp_len, uint32_t bit_ps)
{
	return 8 * (8 + FRAME_HDR_BYTES + udp_len + 4 + 12) * (uint64_t)bit_ps;
}

int rocemu_pcap_write(struct rocemu_pcap *p, const struct rocemu_pcap_run *run,
		      const uint8_t *buf, size_t len, size_t seg)
{
	struct rocemu_ipv4_fields ip;
	uint64_t now, ns, ps = 0;
	size_t off, n;
	int ret;

	if (!p || !run || !run->flow || (!buf && len))
		return -EINVAL;
	if (!seg || seg > len)
		seg = len;
	if (seg > MAX_UDP_PAYLOAD)
		return -EMSGSIZE;
	if (p->err)
		return p->err;
	/* One clock read for the run; a clock stepped back does not reorder the file. */
	now = now_ns();
	ip = run->ip;
	off = 0;
	do {
		n = len - off < seg ? len - off : seg;
		/* Each frame its own time, after every earlier one. */
		ns = record_ns(p, (run->ns ? run->ns : now) + ps / 1000);
		ret = write_record(p, run, &ip, buf + off, n, ns);
		if (ret)
			return ret;
		ip.id++;
		ps += rocemu_pcap_frame_ps(n, run->bit_ps);
		off += n;
	} while (off < len);
	return flush_when_due(p, now);
}

int rocemu_pcap_flush(struct rocemu_pcap *p)
{
	int ret;

	if (!p)
		return -EINVAL;
	p->last_flush_ns = now_ns();
	if (p->err)
		return p->err;
	ret = rocemu_pcap_sink_write(p->fd, p->batch, p->used);
	p->used = 0;
	if (ret) {
		/* The writer's own reason (a full disk, say) says more than the pipe's EPIPE. */
		p->err = rocemu_pcap_sink_stop(p->fd, p->sink);
		p->err = p->err ? p->err : ret;
		p->fd = -1;
	}
	return p->err;
}

int rocemu_pcap_close(struct rocemu_pcap *p)
{
	int rc, err;

	if (!p)
		return 0;
	rc = rocemu_pcap_flush(p);
	err = p->fd >= 0 ? rocemu_pcap_sink_stop(p->fd, p->sink) : 0;
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
