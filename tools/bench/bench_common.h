/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * What udp_bw and udp_lat share: loopback UDP sockets with large buffers,
 * a monotonic clock, CPU pinning, and child processes that cannot outlive
 * their parent or a time limit. Errors end the program (exit 1): these are
 * measuring tools, a failed setup has nothing to measure.
 */
#ifndef ROCEMU_BENCH_COMMON_H
#define ROCEMU_BENCH_COMMON_H

#include <netinet/in.h>
#include <stdint.h>
#include <sys/types.h>

/* Prints "udp_xx: what: strerror(errno)" on stderr and exits 1. */
void bench_die(const char *what) __attribute__((noreturn));

/* Fills *sin from dotted IPv4 text and a port; exits 1 on bad text. */
void bench_parse_addr(const char *text, uint16_t port, struct sockaddr_in *sin);

/*
 * Returns a UDP socket bound to *local with buf_bytes of send and receive
 * buffer: SO_*BUFFORCE when allowed (root), else SO_*BUF, which the kernel
 * caps at [rw]mem_max. Exits 1 on failure.
 */
int bench_udp_socket(const struct sockaddr_in *local, int buf_bytes);

/* Pins the calling process to cpu when the machine has it and allows it, else nothing. */
void bench_pin_cpu(int cpu);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t bench_now_ns(void);

/* In a child forked by parent: die with it, and after max_seconds anyway. */
void bench_bound_child(pid_t parent, unsigned max_seconds);

/* Parses a byte count with an optional K/M/G suffix (powers of 1024); 0 on bad text. */
uint64_t bench_parse_bytes(const char *text);

#endif
