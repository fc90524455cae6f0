/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * A child process that writes a capture file's records, whole ones only,
 * so that a capture survives SIGKILL of its writer (see pcap_sink.c).
 */
#ifndef ROCEMU_NET_PCAP_SINK_H
#define ROCEMU_NET_PCAP_SINK_H

#include <stddef.h>
#include <sys/types.h>

/* The on-disk record header (libpcap's is private): seconds, fraction, bytes kept, frame length. */
#define ROCEMU_PCAP_RECORD_HDR_BYTES 16u
#define ROCEMU_PCAP_RECORD_CAPLEN_AT 8u	/* bytes kept, a 32-bit word */

/*
 * Write head (the file header) to file_fd, then start the writer of
 * file_fd (it is the writer's afterwards, and closed here either way).
 * Returns the write end of the pipe its records go into, with *pid set,
 * or -errno.
 */
int rocemu_pcap_sink_start(int file_fd, const void *head, size_t head_len, pid_t *pid);
/* Hand len bytes of whole records to the writer: 0 or -errno (-EPIPE: the writer is gone). */
int rocemu_pcap_sink_write(int pipe_fd, const void *buf, size_t len);
/*
 * Close pipe_fd and wait for the writer: 0 when every whole record reached
 * the file, else the -errno of the write that failed (-ENOSPC: the disk is
 * full; -EIO: the writer was killed), or waitpid's.
 */
int rocemu_pcap_sink_stop(int pipe_fd, pid_t pid);

#endif /* ROCEMU_NET_PCAP_SINK_H */
