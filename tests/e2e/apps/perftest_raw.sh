#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Unmodified perftest raw_ethernet_* over RAW_PACKET QPs: raw_ethernet_bw
# (UDP, --tcp, -q 4, -D 1), raw_ethernet_lat and raw_ethernet_burst_lat,
# server on rocemu0 and client on rocemu1, frames addressed by the ports'
# MACs with IPv4 and UDP (or TCP) headers; raw_ethernet_fs_rate installing
# its flows on each device. Every run ends with its report line, and a
# capture of the server's port during the run decodes in tshark as
# Ethernet/IPv4/UDP (or TCP), no frame malformed.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_pair.sh"
require_programs raw_ethernet_bw raw_ethernet_lat raw_ethernet_burst_lat raw_ethernet_fs_rate \
	tshark ss
use_test_net 280

ITERS=200
SIZE=256
SERVER_PORT=20480	# the frames' UDP or TCP ports (only in the frames: no socket has them)
CLIENT_PORT=20481

# mac_of A.B.C.D: a port's default MAC, 02:00 then its IPv4 address.
mac_of() {
	local IFS=.

	# shellcheck disable=SC2086
	set -- $1
	printf '02:00:%02x:%02x:%02x:%02x\n' "$1" "$2" "$3" "$4"
}

# raw_qps_ready COUNT PID: the server's COUNT RAW_PACKET QPs are in RTS (at
# most 20 s; false when PID exits first). perftest has no handshake: the
# client sends once it runs, so the server must be steering and receiving by
# then; it posts its receives right after RTS, while the client still opens
# its device.
raw_qps_ready() {
	for _ in $(seq 200); do
		[ "$(run_with_timeout 5 "$ROCEMU" status 2>/dev/null |
			grep -Ec '^  qp 0x[0-9a-f]{6} RAW_PACKET RTS ')" -ge "$QPS" ] && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# raw_pair WHAT TOOL ARGS...: TOOL server on rocemu0, client on rocemu1, each
# with its own MAC first (-B) and the other's (-E), both with the same IPs
# and ports, while rocemu0's port is captured into capture-N.pcap (CAPTURE).
raw_pair() {
	local what=$1 tool=$2 common

	shift 2
	common=(-J "$(addr 1)" -j "$(addr 2)" -K "$SERVER_PORT" -k "$CLIENT_PORT" "$@")
	CAPTURE=$WORK_DIR/capture-$BACKEND-$((++RUNS)).pcap
	run_with_timeout 10 "$ROCEMU" capture rocemu0 -w "$CAPTURE" || fail "$what: rocemu capture rocemu0 failed"
	PAIR_READY=raw_qps_ready run_pair "$what" 30 \
		"$tool" -d rocemu0 --server -B "$MAC0" -E "$MAC1" "${common[@]}" \
		--client "$tool" -d rocemu1 --client -B "$MAC1" -E "$MAC0" "${common[@]}"
	run_with_timeout 10 "$ROCEMU" capture rocemu0 stop || fail "$what: rocemu capture rocemu0 stop failed"
	expect_both "^-{40,}$" "$what: report closed"
}

# expect_frames L4: every frame of the last run's capture is Ethernet/IPv4/L4, none malformed.
expect_frames() {
	expect_decoded "$CAPTURE" "^eth:ethertype:ip:$1(:data)?([[:space:]]|$)" "Ethernet/IPv4/${1^^}"
}

# bw_run WHAT ARGS...: raw_ethernet_bw with ARGS; both sides report ITERS messages of SIZE bytes per QP.
bw_run() {
	local what="raw_ethernet_bw $1"

	shift
	raw_pair "$what" raw_ethernet_bw -s "$SIZE" -n "$ITERS" "$@"
	expect_both "^ *#bytes +#iterations +BW peak" "$what: report header"
	expect_client "^ *$SIZE +$((ITERS * QPS)) +[0-9]+\.[0-9]+ +[0-9]+\.[0-9]+ +[0-9]+\.[0-9]+" \
		"$what: the client sent every message"
	expect_server "^ *$SIZE +$((ITERS * QPS)) +[0-9]+\.[0-9]+ +[0-9]+\.[0-9]+ +[0-9]+\.[0-9]+" \
		"$what: the server received every message"
}

perftest_raw() {
	MAC0=$(mac_of "$(addr 1)")
	MAC1=$(mac_of "$(addr 2)")
	RUNS=0
	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	start_daemon

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
	raw_pair "raw_ethernet_bw -D 1" raw_ethernet_bw -s "$SIZE" -D 1
	expect_both "^ *$SIZE +[1-9][0-9]* +[0-9]+\.[0-9]+ +[0-9]+\.[0-9]+ +[0-9]+\.[0-9]+" \
		"raw_ethernet_bw -D 1: messages counted"
	expect_frames udp

	raw_pair "raw_ethernet_lat" raw_ethernet_lat -s "$SIZE" -n "$ITERS"
	expect_both "^ *#bytes +#iterations +t_min" "raw_ethernet_lat: report header"
	expect_both "^ *$SIZE +$ITERS +[0-9]+\.[0-9]+ +[0-9]+\.[0-9]+ +[0-9]+\.[0-9]+" \
		"raw_ethernet_lat: every round trip timed"
	expect_frames udp

	# The burst server only answers: the client alone reports.
	raw_pair "raw_ethernet_burst_lat" raw_ethernet_burst_lat -s "$SIZE" -n "$ITERS"
	expect_client "^ *#bytes +#iterations +t_min" "raw_ethernet_burst_lat: report header"
	expect_client "^ *$SIZE +$ITERS +[0-9]+\.[0-9]+ +[0-9]+\.[0-9]+ +[0-9]+\.[0-9]+" \
		"raw_ethernet_burst_lat: every burst timed"
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
	expect "^ *$ITERS +[0-9]+\.[0-9]+ +[0-9]+\.[0-9]+ +[0-9]+\.[0-9]+ +[0-9]+\.[0-9]+ +[0-9]+\.[0-9]+" \
		"$what: $ITERS flows created and timed"
	expect_none "Couldn't attach|error" "$what: no flow refused"
}

for_each_backend perftest_raw
