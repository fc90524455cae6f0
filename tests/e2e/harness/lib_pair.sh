# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# shellcheck shell=bash
# Sourced by the tests that run an unmodified server and client as two
# processes (ibv_rc_pingpong, perftest). Each pair gets a TCP port nobody
# listens on; the client starts once the server listens (polled, bounded);
# both run under `rocemu run` and a timeout; both outputs go to the log.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SERVER_OUT=$WORK_DIR/server.out
CLIENT_OUT=$WORK_DIR/client.out
PAIR_PORT=
PORT_BACKEND=
NEXT_PORT=
PORT_LIMIT=
# Words before each side's `rocemu run` (ip netns exec NS env ROCEMU_RUNTIME_DIR=DIR: another host).
PAIR_SERVER_WRAP=()
PAIR_CLIENT_WRAP=()

# Each test's TCP ports follow from its net N (use_test_net): 40 for the
# io_uring backend, then 40 for epoll, from 12000 + 80 N, and past N 255
# (which would reach them) from 2000 + 80 (N - 256), below the first
# test's; every test has its own N, and all of them stay below the
# kernel's ephemeral ports (32768).
TEST_PORTS_PER_BACKEND=40

# port_listening PORT: some socket listens on TCP port PORT.
port_listening() {
	ss -Hltn "sport = :$1" | grep -q .
}

# next_port: PAIR_PORT becomes the next port of this test that nobody listens on.
next_port() {
	[ -n "$TEST_NET" ] || fail "use_test_net was not called"
	if [ "$PORT_BACKEND" != "$BACKEND" ]; then
		PORT_BACKEND=$BACKEND
		NEXT_PORT=$(((TEST_NET < 256 ? 12000 : 2000) +
			     ((TEST_NET & 255) * 2 + BACKEND_INDEX) * TEST_PORTS_PER_BACKEND))
		PORT_LIMIT=$((NEXT_PORT + TEST_PORTS_PER_BACKEND))
	fi
	while port_listening "$NEXT_PORT"; do
		NEXT_PORT=$((NEXT_PORT + 1))
	done
	[ "$NEXT_PORT" -lt "$PORT_LIMIT" ] ||
		fail "the test's $TEST_PORTS_PER_BACKEND TCP ports for $BACKEND are used up"
	PAIR_PORT=$NEXT_PORT
	NEXT_PORT=$((NEXT_PORT + 1))
}

# wait_listening PORT PID: wait (at most 20 s) until PORT listens; fails when PID exits first.
wait_listening() {
	for _ in $(seq 200); do
		port_listening "$1" && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# wait_exit PID SECS: wait (at most SECS) until PID has exited.
wait_exit() {
	for _ in $(seq $(($2 * 50))); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.02
	done
	return 1
}

# perftest_clock TOOL: PERFTEST_CLOCK becomes the options that keep TOOL's
# report free of perftest's CPU-clock calibration (rdtsc fitted against
# gettimeofday, which one preemption on a busy machine spoils): -F goes on
# past a failed fit, and a latency tool reports cycles (-C), never "inf".
perftest_clock() {
	PERFTEST_CLOCK=(-F)
	case $1 in *_lat) PERFTEST_CLOCK+=(-C) ;; esac
}

# log_side NAME FILE STATUS: one side's output into the commands log.
log_side() {
	echo "---- $1 output (exit status $3)" >>"$COMMANDS_LOG"
	cat "$2" >>"$COMMANDS_LOG"
}

# run_pair WHAT SECS SERVER_CMD... --client CLIENT_CMD...: the server
# in the background, then, once it listens on PAIR_PORT (PAIR_READY PORT PID
# says so: wait_listening, a TCP port, unless the caller sets another), the client; each
# under `rocemu run` and a SECS timeout. The test fails unless both exit 0
# (with PAIR_LOSSY set: or last_ack_lost holds). PAIR_SERVER_RC and
# PAIR_CLIENT_RC keep the exit statuses.
# Outputs stay in SERVER_OUT and CLIENT_OUT for the caller's checks.
run_pair() {
	local what=$1 secs=$2 server=() client=() server_pid client_pid server_rc client_rc grace

	shift 2
	while [ $# -gt 0 ] && [ "$1" != --client ]; do
		server+=("$1")
		shift
	done
	[ $# -gt 0 ] || fail "run_pair $what: no --client"
	shift
	client=("$@")

	# stdbuf: a side stopped on its time limit still shows how far it got.
	echo "+ [$what] server: ${server[*]} &" >>"$COMMANDS_LOG"
	run_with_timeout $((secs + 10)) "${PAIR_SERVER_WRAP[@]}" "$ROCEMU" run -- stdbuf -oL "${server[@]}" >"$SERVER_OUT" 2>&1 &
	server_pid=$!
	BACKGROUND_PIDS+=("$server_pid")
	if ! "${PAIR_READY:-wait_listening}" "$PAIR_PORT" "$server_pid"; then
		kill "$server_pid" 2>/dev/null
		wait "$server_pid"
		server_rc=$?
		forget_pid "$server_pid"
		log_side server "$SERVER_OUT" "$server_rc"
		fail "$what: the server never listened on port $PAIR_PORT"
	fi

	echo "+ [$what] client: ${client[*]}" >>"$COMMANDS_LOG"
	run_with_timeout $((secs + 10)) "${PAIR_CLIENT_WRAP[@]}" "$ROCEMU" run -- stdbuf -oL "${client[@]}" >"$CLIENT_OUT" 2>&1 &
	client_pid=$!
	BACKGROUND_PIDS+=("$client_pid")
	if ! wait_exit "$client_pid" "$secs"; then
		# Both ends still hold their QPs: the daemon shows where they stand.
		echo "---- rocemu status: the client still runs after $secs s" >>"$COMMANDS_LOG"
		run_with_timeout 5 "$ROCEMU" status >>"$COMMANDS_LOG" 2>&1
		kill "$client_pid" 2>/dev/null
	fi
	wait "$client_pid"
	client_rc=$?
	forget_pid "$client_pid"
	# A server whose client failed may wait for it forever: a short grace, then stop it.
	grace=$([ "$client_rc" -eq 0 ] && echo "$secs" || echo 3)
	wait_exit "$server_pid" "$grace" || kill "$server_pid" 2>/dev/null
	wait "$server_pid"
	server_rc=$?
	forget_pid "$server_pid"
	log_side server "$SERVER_OUT" "$server_rc"
	log_side client "$CLIENT_OUT" "$client_rc"
	PAIR_SERVER_RC=$server_rc
	PAIR_CLIENT_RC=$client_rc
	if [ "$server_rc" -eq 0 ] && [ "$client_rc" -eq 0 ]; then
		ok "$what: server and client exit 0"
	elif side_finished "$server_rc" "$SERVER_OUT" && side_finished "$client_rc" "$CLIENT_OUT"; then
		ok "$what: both finished (an rping before rdma-core 59 exits 255 after its last CM event)"
	elif [ -n "$PAIR_LOSSY" ] && last_ack_lost "$server_rc" "$SERVER_OUT" "$client_rc" "$CLIENT_OUT"; then
		ok "$what: one side lost the ACK of its last send after the other had finished"
	else
		fail "$what: server exit status $server_rc, client $client_rc (143: stopped on the time limit)"
	fi
}

# pingpong_4k ITERS: ibv_rc_pingpong from rocemu1 to rocemu0, 4 KiB, data checked.
pingpong_4k() {
	next_port
	run_pair "ibv_rc_pingpong -n $1" 60 \
		ibv_rc_pingpong -d rocemu0 -g 0 -c -p "$PAIR_PORT" -s 4096 -n "$1" \
		--client ibv_rc_pingpong -d rocemu1 -g 0 -c -p "$PAIR_PORT" -s 4096 -n "$1" 127.0.0.1
	expect_both "^$1 iters in " "ibv_rc_pingpong -n $1: every iteration"
}

# side_finished RC OUT: the side exited 0, or it is an rping of rdma-core
# before 59 that finished and lost its own exit race: its CM thread handled
# the last event (DISCONNECTED), its main thread destroyed the event channel,
# and the CM thread's next rdma_get_cm_event failed, EBADF, exit 255 (on any
# device; fixed upstream by "rping: terminate CM event thread before exiting").
side_finished() {
	[ "$1" -eq 0 ] && return
	[ "$1" -eq 255 ] && [ "$(tail -n 1 "$2")" = "rdma_get_cm_event: Bad file descriptor" ] &&
		tail -n 2 "$2" | head -n 1 | grep -Eq '^(client|server) DISCONNECT EVENT\.\.\.$'
}

# last_ack_lost RC_A OUT_A RC_B OUT_B: exactly one side failed, on its last
# SEND (wr_id 2 in ibv_rc_pingpong) with RETRY_EXC_ERR, and the other exited
# 0. Under injected loss this is how a pingpong may end: the side that
# finishes first destroys its QP, so when the ACK of its peer's last SEND was
# dropped, the peer's resends find no QP and its retries run out, as they
# would between two hardware NICs on a lossy fabric.
last_ack_lost() {
	local rc_a=$1 out_a=$2 rc_b=$3 out_b=$4 failed

	if [ "$rc_a" -eq 0 ] && [ "$rc_b" -ne 0 ]; then
		failed=$out_b
	elif [ "$rc_b" -eq 0 ] && [ "$rc_a" -ne 0 ]; then
		failed=$out_a
	else
		return 1
	fi
	grep -Eq '^Failed status transport retry counter exceeded \(12\) for wr_id 2$' "$failed"
}

# expect_finished ERE WHAT: each side that exited 0 has a matching line.
expect_finished() {
	[ "$PAIR_SERVER_RC" -ne 0 ] || expect_server "$@"
	[ "$PAIR_CLIENT_RC" -ne 0 ] || expect_client "$@"
}

# expect_server ERE WHAT, expect_client ERE WHAT: a line of that side's output matches ERE.
expect_server() {
	local OUT=$SERVER_OUT

	expect "$1" "$2 (server)"
}

expect_client() {
	local OUT=$CLIENT_OUT

	expect "$1" "$2 (client)"
}

# expect_both ERE WHAT: both sides have a matching line.
expect_both() {
	expect_server "$@"
	expect_client "$@"
}

# expect_neither ERE WHAT: no line of either side matches ERE.
expect_neither() {
	local OUT

	for OUT in "$SERVER_OUT" "$CLIENT_OUT"; do
		expect_none "$1" "$2 ($([ "$OUT" = "$SERVER_OUT" ] && echo server || echo client))"
	done
}

# tshark reads RoCEv2 as InfiniBand and no further: payloads are application
# data, which the heuristics of upper protocols (RPC-over-RDMA, SMC-R, SMB
# Direct, Ethernet over IB...) would misread as their own, malformed.
TSHARK_IB=()
for heuristic in eth_over_ib fc_infiniband iser_infiniband lnet_ib mellanox_eoib nvme_rdma \
	rpcrdma_infiniband sdp_infiniband smb_direct_infiniband smcr_infiniband; do
	TSHARK_IB+=(--disable-heuristic "$heuristic")
done

# expect_decoded FILE ERE WHAT: tshark reads capture FILE (TSHARK_IB), every
# frame's "protocols<TAB>BTH opcode" line matches ERE (it is WHAT), and none
# is malformed. Sets FRAMES to the number of frames.
expect_decoded() {
	local file=$1 matching

	[ -s "$file" ] || fail "no capture in $file"
	capture 30 tshark -r "$file" "${TSHARK_IB[@]}" -T fields \
		-e frame.protocols -e infiniband.bth.opcode || fail "tshark cannot read $file"
	# Frames are the lines naming protocols (tshark may add a warning of its own).
	FRAMES=$(grep -c '^eth:' "$OUT")
	matching=$(grep -Ec -- "$2" "$OUT")
	[ "$FRAMES" -gt 0 ] && [ "$FRAMES" -eq "$matching" ] ||
		fail "$file: $matching of $FRAMES frames decode as $3"
	capture 30 tshark -r "$file" "${TSHARK_IB[@]}" -Y _ws.malformed ||
		fail "tshark cannot filter $file"
	expect_none '^ *[0-9]+ ' "$(basename "$file"): no malformed frame"
	ok "$(basename "$file"): $FRAMES frames, all $3, none malformed"
}

# check_capture FILE: every frame is RoCEv2 decoded as InfiniBand, none
# malformed, each to port 4791 from a per-QP-pair port in 0xC000-0xFFFF
# (4791 where that is taken).
check_capture() {
	local file=$1 other high

	expect_decoded "$file" '^eth:.*:infiniband' InfiniBand
	capture 30 tshark -r "$file" "${TSHARK_IB[@]}" -T fields -e udp.srcport -e udp.dstport ||
		fail "tshark cannot read the ports of $file"
	other=$(awk '$1 ~ /^[0-9]+$/ && $2 != 4791' "$OUT" | wc -l)
	high=$(awk '$1 ~ /^[0-9]+$/ && $1 >= 49152' "$OUT" | wc -l)
	[ "$other" -eq 0 ] || fail "$file: $other frames not to UDP port 4791"
	[ "$high" -gt 0 ] || fail "$file: no frame from a source port in 0xC000-0xFFFF"
	ok "$(basename "$file"): every frame to port 4791, $high from per-flow source ports"
}

# check_captures DIR: check_capture of every device's capture in DIR (a skip without tshark).
check_captures() {
	local file

	if ! command -v tshark >/dev/null; then
		echo "skip the capture check: tshark is not installed"
		return 0
	fi
	for file in "$1"/*.pcap; do
		check_capture "$file"
	done
}

# wait_cm_listening PORT PID: an RDMA CM id of the daemon listens on PORT (at most 20 s).
wait_cm_listening() {
	for _ in $(seq 200); do
		run_with_timeout 5 "$ROCEMU" status 2>/dev/null | grep -q " LISTEN .*:$1 -> " && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# cm_ladder FILE MESSAGE...: tshark decodes each CM MESSAGE (ConnectRequest...) in capture FILE.
cm_ladder() {
	local file=$1 msg

	shift
	command -v tshark >/dev/null || return 0
	capture 30 tshark -r "$file" "${TSHARK_IB[@]}" -T fields -e _ws.col.Info ||
		fail "tshark cannot read $file"
	for msg in "$@"; do
		grep -q "CM: $msg" "$OUT" || fail "$(basename "$file"): no CM $msg"
	done
	ok "$(basename "$file"): $* decoded as InfiniBand CM"
}
