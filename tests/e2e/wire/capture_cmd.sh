#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# `rocemu capture DEV -w FILE` and `rocemu capture DEV stop` on a running
# daemon started without ROCEMU_PCAP: the capture holds the traffic between
# start and stop and nothing after; `rocemu status` names the file; wrong
# uses fail with a line saying why. A capture whose daemon is killed with
# SIGKILL in the middle of traffic is still a whole, readable pcap.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_pair.sh"
require_programs ibv_rc_pingpong tshark ss
use_test_net 72

# frames FILE: the number of frames tshark reads in FILE (fails on a damaged file).
frames() {
	capture 30 tshark -r "$1" -T fields -e frame.number || fail "tshark cannot read $1: $(tail -2 "$OUT")"
	expect_none "cut short|appears to be damaged|corrupt" "$(basename "$1"): whole and readable"
	FRAMES=$(grep -c '^[0-9]' "$OUT")
}

capture_cmd() {
	local file=capture-$BACKEND.pcap before pid server client

	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	start_daemon
	pingpong_4k 5
	(cd "$WORK_DIR" && run_with_timeout 10 "$ROCEMU" capture rocemu0 -w "$file") ||
		fail "rocemu capture rocemu0 -w $file failed"
	capture 10 "$ROCEMU" status
	expect_fixed "port ACTIVE mtu 4096 capture $WORK_DIR/$file" "status names the capture file, made absolute"
	cli_refused "a second capture" "captures already" capture rocemu0 -w "$WORK_DIR/other.pcap"
	cli_refused "an unknown device" "no device nosuchdev" capture nosuchdev -w "$WORK_DIR/x.pcap"
	cli_refused "a file in no directory" "cannot write .*/nonexistent/x.pcap: No such file" \
		capture rocemu1 -w "$WORK_DIR/nonexistent/x.pcap"
	pingpong_4k 20
	run_with_timeout 10 "$ROCEMU" capture rocemu0 stop || fail "rocemu capture rocemu0 stop failed"
	cli_refused "a stop without a capture" "rocemu0 has no capture running" capture rocemu0 stop
	frames "$WORK_DIR/$file"
	before=$FRAMES
	[ "$before" -ge 100 ] || fail "$file holds $before frames, not the 20 round trips' 100 or more"
	ok "$file: $before frames of the 20 round trips"
	check_capture "$WORK_DIR/$file"
	pingpong_4k 5
	frames "$WORK_DIR/$file"
	[ "$FRAMES" -eq "$before" ] || fail "$file grew from $before to $FRAMES frames after the stop"
	ok "$file: nothing added after the stop"

	# Killed under traffic: the file ends at a whole record.
	run_with_timeout 10 "$ROCEMU" capture rocemu0 -w "$WORK_DIR/killed-$BACKEND.pcap" ||
		fail "rocemu capture rocemu0 -w killed.pcap failed"
	pid=$(daemon_pid)
	[ -n "$pid" ] || fail "no pid of rocemud in rocemu status"
	next_port
	run_with_timeout 60 "$ROCEMU" run -- ibv_rc_pingpong -d rocemu0 -g 0 -p "$PAIR_PORT" \
		-s 65536 -n 100000 >/dev/null 2>&1 &
	server=$!
	BACKGROUND_PIDS+=("$server")
	wait_listening "$PAIR_PORT" "$server" || fail "ibv_rc_pingpong's server does not listen"
	run_with_timeout 60 "$ROCEMU" run -- ibv_rc_pingpong -d rocemu1 -g 0 -p "$PAIR_PORT" \
		-s 65536 -n 100000 127.0.0.1 >/dev/null 2>&1 &
	client=$!
	BACKGROUND_PIDS+=("$client")
	for _ in $(seq 600); do
		[ "$(stat -c %s "$WORK_DIR/killed-$BACKEND.pcap")" -gt 4000000 ] && break
		sleep 0.05
	done
	echo "+ kill -KILL $pid (rocemud, $(stat -c %s "$WORK_DIR/killed-$BACKEND.pcap") bytes captured)" >>"$COMMANDS_LOG"
	kill -KILL "$pid"
	kill "$server" "$client" 2>/dev/null
	wait "$DAEMON_PID" "$server" "$client" 2>/dev/null
	frames "$WORK_DIR/killed-$BACKEND.pcap"
	[ "$FRAMES" -gt 0 ] || fail "the capture of the killed daemon holds no frame"
	ok "the capture of a daemon killed under traffic: $FRAMES whole frames"
}

for_each_backend capture_cmd
