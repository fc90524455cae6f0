# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# shellcheck shell=bash disable=SC2034
# Sourced by the tests that run perftest's raw_ethernet_* tools: a daemon
# of two devices whose ports have their default MACs (MAC0, MAC1), a server
# on rocemu0 and a client on rocemu1 sending frames with IPv4 and UDP (or
# TCP) headers between the ports' addresses, a capture of rocemu0's port
# during each run.
. "$(dirname "${BASH_SOURCE[0]}")/lib_pair.sh"

PAIR_LOSSY=
SERVER_PORT=20480	# the frames' UDP or TCP ports (only in the frames: no socket has them)
CLIENT_PORT=20481
# perftest's payload is arbitrary bytes: tshark reads it as data, never as
# what a heuristic dissector guesses (some of it passes for R-GOOSE).
TSHARK_IB+=(-d "udp.port==$SERVER_PORT-$((SERVER_PORT + 15)),data"
	-d "tcp.port==$SERVER_PORT-$((SERVER_PORT + 15)),data")

# mac_of A.B.C.D: a port's default MAC, 02:00 then its IPv4 address.
mac_of() {
	local IFS=.

	# shellcheck disable=SC2086
	set -- $1
	printf '02:00:%02x:%02x:%02x:%02x\n' "$1" "$2" "$3" "$4"
}

# raw_qps_ready PORT PID: the server's QPS RAW_PACKET QPs are in RTR or RTS
# and, when RAW_RX is set, each has its RAW_RX receives posted (at most 20 s;
# false when PID exits first). perftest has no handshake: the client sends
# once it runs, so the server must be steering and receiving by then; it
# posts its receives after the transition to RTR, which `rocemu status`
# shows as each raw QP's rq_posted.
raw_qps_ready() {
	for _ in $(seq 200); do
		[ "$(run_with_timeout 5 "$ROCEMU" status 2>/dev/null |
			awk -v rx="${RAW_RX:-0}" '$1 == "qp" && $3 == "RAW_PACKET" &&
				$4 ~ /^RT[RS]$/ && (rx == 0 || ($7 == "rq_posted" && $8 >= rx))' |
			wc -l)" -ge "$QPS" ] && return 0
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
	common=(-J "$(addr 1)" -j "$(addr 2)" -K "$SERVER_PORT" -k "$CLIENT_PORT" ${RAW_RX:+-r "$RAW_RX"} "$@")
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

# start_raw_pair: the daemon of rocemu0 and rocemu1, their MACs in MAC0 and MAC1.
start_raw_pair() {
	MAC0=$(mac_of "$(addr 1)")
	MAC1=$(mac_of "$(addr 2)")
	RUNS=0
	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	start_daemon
}
