/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Packet capture of a device (ROCEMU_PCAP=<dir> writes <dir>/<dev>.pcap
 * from the start; `rocemu capture DEV -w FILE` while the daemon runs):
 * every datagram it sends, before fault injection, and every one it
 * receives, framed as Ethernet/IPv4/UDP so Wireshark decodes RoCEv2.
 */
#ifndef ROCEMU_EMULATOR_CAPTURE_H
#define ROCEMU_EMULATOR_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

#include "net/roce/icrc.h"
#include "net/observe/pcap.h"

struct rocemu_device;
struct rocemu_emu;

/*
 * Set the snap length of every capture of emu from ROCEMU_PCAP_SNAPLEN
 * (unset: ROCEMU_PCAP_SNAPLEN_DEFAULT). Returns 0, or -EINVAL with a
 * one-line reason in err for a value rocemu_pcap_snaplen_parse() refuses.
 */
int rocemu_capture_configure(struct rocemu_emu *emu, char *err, size_t errlen);

/*
 * Start capturing dev into the file at path (created or truncated), frames
 * cut at the snap length of dev's emu.
 * Returns 0, -EBUSY while a capture of dev runs, or -errno with a one-line
 * reason in err.
 */
int rocemu_capture_start(struct rocemu_device *dev, const char *path, char *err, size_t errlen);

/*
 * Capture the packets of buf[0, len) as run says (flow, the first one's
 * IPv4 fields and time, its UDP checksum; run.bit_ps is the port's): one,
 * or with seg > 0 and seg < len a run of seg-byte packets (the last
 * possibly shorter), each next one with the next ID, stamped when the one
 * before it has passed the port. A failed write stops the capture with a
 * log line. No-op without capture.
 */
void rocemu_capture_packets(struct rocemu_device *dev, struct rocemu_pcap_run run,
			    const uint8_t *buf, size_t len, size_t seg);

/* Capture an Ethernet frame of dev as it is (the port's switch moved it). No-op without capture. */
void rocemu_capture_frame(struct rocemu_device *dev, const uint8_t *frame, size_t len);

/* Picoseconds a packet of len bytes of UDP payload takes through dev's port. */
uint64_t rocemu_capture_packet_ps(size_t len);

/* Push captured frames to the file (the daemon is going idle). */
void rocemu_capture_flush(struct rocemu_device *dev);

/* Close the capture, if any. */
void rocemu_capture_stop(struct rocemu_device *dev);

/* The file dev captures into, NULL when none. */
const char *rocemu_capture_path(const struct rocemu_device *dev);

#endif /* ROCEMU_EMULATOR_CAPTURE_H */
