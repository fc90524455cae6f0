#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Unmodified perftest raw_ethernet_* over RAW_PACKET QPs: raw_ethernet_bw
# (UDP, --tcp, -q 4, -D 1) and raw_ethernet_lat, server on rocemu0 and
# client on rocemu1, frames addressed by the ports'
# MACs with IPv4 and UDP (or TCP) headers; raw_ethernet_fs_rate installing
# its flows on each device. Every run ends with its report line, and a
# capture of the server's port during the run decodes in tshark as
# Ethernet/IPv4/UDP (or TCP), no frame malformed.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_raw.sh"
require_programs raw_ethernet_bw raw_ethernet_lat raw_ethernet_fs_rate tshark ss
use_test_net 280

ITERS=200
SIZE=256
# Each server QP posts ITERS receives (-r) and the client starts once they are
# posted (raw_qps_ready): every message of a run has its receive waiting.
RAW_RX=$ITERS

# bw_run WHAT ARGS...: raw_ethernet_bw with ARGS; both sides report ITERS messages of SIZE bytes per QP.
bw_run() {
	local what="raw_ethernet_bw $1"

	shift
	raw_pair "$what" raw_ethernet_bw -s "$SIZE" -n "$ITERS" "$@"
	expect_both "^ *#bytes +#iterations +BW peak" "$what: report header"
	expect_client "^ *$SIZE +$((ITERS * QPS))[[:space:]]+[0-9]+\.[0-9]+[[:space:]]+[0-9]+\.[0-9]+[[:space:]]+[0-9]+\.[0-9]+" \
		"$what: the client sent every message"
	expect_server "^ *$SIZE +$((ITERS * QPS))[[:space:]]+[0-9]+\.[0-9]+[[:space:]]+[0-9]+\.[0-9]+[[:space:]]+[0-9]+\.[0-9]+" \
		"$what: the server received every message"
}

perftest_raw() {
	start_raw_pair

	QPS=1
	bw_run "UDP"
	expect_server "MAC attached +: ${MAC0^^}" "raw_ethernet_bw: the server's flow matches its own MAC"
	expect_server "spec_info - dst_port : $SERVER_PORT" "raw_ethernet_bw: the server's flow matches its port"
	expect_frames udp
	bw_run "--tcp" --tcp
	expect_frames tcp
	QPS=4
	bw_run "-q 4" -q 4
	expect_frames udp
	QPS=1

	# Duration mode: the count is whatever fit in the second, on both sides the same way.
	RAW_RX=512 raw_pair "raw_ethernet_bw -D 1" raw_ethernet_bw -s "$SIZE" -D 1
	expect_both "^ *$SIZE +[1-9][0-9]*[[:space:]]+[0-9]+\.[0-9]+[[:space:]]+[0-9]+\.[0-9]+[[:space:]]+[0-9]+\.[0-9]+" \
		"raw_ethernet_bw -D 1: messages counted"
	expect_frames udp

	raw_pair "raw_ethernet_lat" raw_ethernet_lat -s "$SIZE" -n "$ITERS"
	expect_both "^ *#bytes +#iterations +t_min" "raw_ethernet_lat: report header"
	expect_both "^ *$SIZE +${ITERS}[[:space:]]+[0-9]+\.[0-9]+[[:space:]]+[0-9]+\.[0-9]+[[:space:]]+[0-9]+\.[0-9]+" \
		"raw_ethernet_lat: every round trip timed"
	expect_frames udp

	fs_rate rocemu0 "$MAC0" "$MAC1"
	fs_rate rocemu1 "$MAC1" "$MAC0"
}

# fs_rate DEV MAC PEER_MAC: raw_ethernet_fs_rate installs ITERS flows on DEV's QP and reports their rate.
fs_rate() {
	local what="raw_ethernet_fs_rate on $1"

	capture 60 "$ROCEMU" run -- raw_ethernet_fs_rate -d "$1" --server -B "$2" -E "$3" \
		-J "$(addr 1)" -j "$(addr 2)" -K "$SERVER_PORT" -k "$CLIENT_PORT" -n "$ITERS" ||
		fail "$what failed"
	expect "^ *#flows[[:space:]]+fs_min_time" "$what: report header"
	expect "^ *${ITERS}[[:space:]]+[0-9]+\.[0-9]+[[:space:]]+[0-9]+\.[0-9]+[[:space:]]+[0-9]+\.[0-9]+[[:space:]]+[0-9]+\.[0-9]+[[:space:]]+[0-9]+\.[0-9]+" \
		"$what: $ITERS flows created and timed"
	expect_none "Couldn't attach|error" "$what: no flow refused"
}

for_each_backend perftest_raw
