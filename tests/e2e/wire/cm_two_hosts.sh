#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Two daemons as two hosts: each in a network namespace of its own, joined
# by a veth pair (198.18.244.1 and .2, MTU 1500: the devices take the
# link's MTU, active_mtu 1024). Unmodified rping (100 validated pings) and
# ib_write_bw -R between them; each side's capture shows the CM handshake
# and the data, decoded as InfiniBand by tshark, none malformed, and the
# first requests of each side start where the other's REQ or REP said.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_pair.sh"
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_hosts.sh"
CM_PSN_CHECK=$top_builddir/tests/e2e/harness/cm_psn_check
require_built "$CM_PSN_CHECK"
require_programs rping ib_write_bw ip
use_test_net 242
PAIR_READY=wait_cm_listening
PAIR_LOSSY=
HOST_A=rocemu-cm2-$$-a
HOST_B=rocemu-cm2-$$-b
ADDR_A=198.18.244.1
ADDR_B=198.18.244.2

two_hosts() {
	local dir_a=$ROCEMU_RUNTIME_DIR dir_b=$WORK_DIR/run-$BACKEND-b what dir

	start_host "$HOST_A" "$ADDR_A" "$dir_a"
	start_host "$HOST_B" "$ADDR_B" "$dir_b"
	PAIR_SERVER_WRAP=(ip netns exec "$HOST_A" env ROCEMU_RUNTIME_DIR="$dir_a")
	PAIR_CLIENT_WRAP=(ip netns exec "$HOST_B" env ROCEMU_RUNTIME_DIR="$dir_b")
	capture 30 "${PAIR_CLIENT_WRAP[@]}" "$ROCEMU" run -- ibv_devinfo -d rocemu0 ||
		fail "ibv_devinfo in $HOST_B failed"
	expect "active_mtu:[[:space:]]+1024 \\(3\\)" "a device on a link of MTU 1500 runs at IB MTU 1024"

	what="rping -C 100 -V, $ADDR_B -> $ADDR_A"
	next_port
	run_pair "$what" 30 rping -s -a "$ADDR_A" -p "$PAIR_PORT" -C 100 -V \
		--client rping -c -a "$ADDR_A" -p "$PAIR_PORT" -C 100 -v -V
	[ "$(grep -c '^ping data: rdma-ping-' "$CLIENT_OUT")" -eq 100 ] ||
		fail "$what: the client shows $(grep -c '^ping data: rdma-ping-' "$CLIENT_OUT") of 100 pings"
	OUT=$CLIENT_OUT expect_fixed "ping data: rdma-ping-99: " "$what: the 100th ping's data"

	what="ib_write_bw -R -n 200, $ADDR_B -> $ADDR_A"
	next_port
	run_pair "$what" 30 ib_write_bw -R -d rocemu0 -p "$PAIR_PORT" -n 200 \
		--client ib_write_bw -R -d rocemu0 -p "$PAIR_PORT" -n 200 "$ADDR_A"
	expect_both "^ 65536 +200 +[0-9.]+ +[0-9.]+[[:space:]]" "$what: 200 writes of 64 KiB"

	stop_daemon "$dir_a"
	stop_daemon "$dir_b"
	for dir in "$dir_a" "$dir_b"; do
		check_captures "$dir/pcap"
		cm_ladder "$dir/pcap/rocemu0.pcap" ConnectRequest ConnectReply ReadyToUse \
			DisconnectRequest DisconnectReply
		# rping sends both ways: each side's first request carries the other's Starting PSN.
		capture 30 "$CM_PSN_CHECK" "$dir/pcap/rocemu0.pcap" 1 1 ||
			fail "cm_psn_check $(basename "$dir"): a Starting PSN is not where the first request starts"
		ok "$(tail -1 "$OUT")"
		command -v tshark >/dev/null || continue
		capture 30 tshark -r "$dir/pcap/rocemu0.pcap" "${TSHARK_IB[@]}" -T fields -e _ws.col.Info
		expect "RDMA Write (First|Only)" "$(basename "$dir"): the RDMA writes are in the capture"
	done
	PAIR_SERVER_WRAP=()
	PAIR_CLIENT_WRAP=()
}

add_hosts
trap 'del_hosts; cleanup' EXIT
for_each_backend two_hosts
