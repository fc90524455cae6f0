#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Unmodified perftest raw_ethernet_burst_lat: the client on rocemu1 sends
# bursts to the server on rocemu0, which answers each frame; the client
# reports every burst timed, and the capture decodes as Ethernet/IPv4/UDP.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_raw.sh"
require_programs raw_ethernet_burst_lat tshark ss
use_test_net 287

ITERS=200
SIZE=256
# The server posts a receive for every frame of the run (-r) before the client starts.
RAW_RX=$ITERS

perftest_raw_burst() {
	QPS=1
	start_raw_pair
	# The burst server only answers: the client alone reports. perftest 4.5
	# needs a rate limit asked for (its SW default refuses a latency test):
	# HW at 10 MB/s, which an Ethernet port turns down for SW. Every send is
	# signaled (-Q 1: with the default moderation of 100 the client never
	# sees a completion of its 128 unsignaled sends and stops). The server
	# skips a reply (which the client then waits for) whenever its replies
	# not yet completed reach its tx depth: a depth of the run's length (-t)
	# makes that impossible, however late the daemon completes them.
	raw_pair "raw_ethernet_burst_lat" raw_ethernet_burst_lat -s "$SIZE" -n "$ITERS" \
		--rate_limit=10 --rate_units=M --burst_size=32 -Q 1 -t "$ITERS"
	expect_client "^ *#bytes +#iterations +t_min" "raw_ethernet_burst_lat: report header"
	expect_client "^ *$SIZE +${ITERS}[[:space:]]+[0-9]+\.[0-9]+[[:space:]]+[0-9]+\.[0-9]+[[:space:]]+[0-9]+\.[0-9]+" \
		"raw_ethernet_burst_lat: every burst timed"
	expect_frames udp
}

for_each_backend perftest_raw_burst
