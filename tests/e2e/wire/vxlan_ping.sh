#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The L2 wire between hosts is VXLAN a Linux host understands: two network
# namespaces joined by a veth pair (198.18.248.1 and .2); on the first a
# Linux vxlan interface (VNI 42, 198.19.48.1/24 inside) pointed at the
# second, where rocemu's device has the VXLAN configuration pointing back
# and a configured MAC, and raw_echo, a RAW_PACKET QP with flow rules for
# that MAC and broadcast, answers ARP and ICMP echo for 198.19.48.2.
# The kernel's `ping -c 3` gets its three replies; tcpdump on the Linux
# side's veth sees VXLAN (VNI 42) carrying the echo requests and replies;
# rocemu status shows the MAC and what the wire received and learned.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_hosts.sh"
RAW_ECHO=$top_builddir/tests/e2e/wire/raw_echo
require_built "$RAW_ECHO"
require_programs ip ping tcpdump
use_test_net 248
HOST_A=rocemu-vxlan-$$-a	# Linux's vxlan
HOST_B=rocemu-vxlan-$$-b	# rocemu's device
ADDR_A=198.18.248.1
ADDR_B=198.18.248.2
VNI=42
INNER_LINUX=198.19.48.1
INNER_ECHO=198.19.48.2
ECHO_MAC=02:42:c6:13:30:02
# 1500 of the veth less the 50 bytes of outer Ethernet, IPv4, UDP and VXLAN, as Linux's vxlan takes.
INNER_MTU=1450

add_vxlan() {
	ip -n "$HOST_A" link add vx0 type vxlan id "$VNI" remote "$ADDR_B" local "$ADDR_A" \
		dstport 4789 dev veth0 2>"$WORK_DIR/vxlan.err" ||
		skip "cannot make a vxlan interface here: $(cat "$WORK_DIR/vxlan.err")"
	ip -n "$HOST_A" addr add "$INNER_LINUX/24" dev vx0 && ip -n "$HOST_A" link set vx0 up ||
		fail "cannot set up vx0 in $HOST_A"
}

vxlan_ping() {
	local dir=$WORK_DIR/run-$BACKEND-b pcap=$WORK_DIR/veth-$BACKEND.pcap
	local dump_pid echo_pid echo_out=$WORK_DIR/echo-$BACKEND.out rc

	start_host "$HOST_B" "$ADDR_B/$INNER_MTU/mac=$ECHO_MAC/vxlan=$VNI/vxlan_remote=$ADDR_A" "$dir"
	ROCEMU_RUNTIME_DIR=$dir capture 10 "$ROCEMU" status || fail "rocemu status failed"
	expect "^device rocemu0 $ADDR_B mac $ECHO_MAC port ACTIVE" "the device has the configured MAC"
	expect "^  vxlan vni $VNI port 4789 remotes $ADDR_A " "the device's VXLAN wire points at $ADDR_A"

	# What the Linux host's kernel sees on its veth.
	ip netns exec "$HOST_A" timeout -k 5 60 tcpdump -i veth0 -n -U --immediate-mode -w "$pcap" udp port 4789 \
		2>"$WORK_DIR/tcpdump-$BACKEND.err" &
	dump_pid=$!
	BACKGROUND_PIDS+=("$dump_pid")
	for _ in $(seq 100); do
		grep -q "listening on" "$WORK_DIR/tcpdump-$BACKEND.err" && break
		sleep 0.1
	done
	grep -q "listening on" "$WORK_DIR/tcpdump-$BACKEND.err" || fail "tcpdump does not listen on veth0"

	echo "+ raw_echo in $HOST_B" >>"$COMMANDS_LOG"
	ip netns exec "$HOST_B" env ROCEMU_RUNTIME_DIR="$dir" timeout -k 5 60 "$ROCEMU" run -- \
		"$RAW_ECHO" rocemu0 "$ECHO_MAC" "$INNER_ECHO" 3 40 >"$echo_out" 2>&1 &
	echo_pid=$!
	BACKGROUND_PIDS+=("$echo_pid")
	for _ in $(seq 100); do
		grep -q "^ready" "$echo_out" && break
		kill -0 "$echo_pid" 2>/dev/null || break
		sleep 0.1
	done
	if ! grep -q "^ready" "$echo_out"; then
		wait "$echo_pid"
		rc=$?
		cat "$echo_out" >>"$COMMANDS_LOG"
		[ "$rc" -eq 77 ] && skip "no RAW_PACKET QPs or flows here: $(cat "$echo_out")"
		fail "raw_echo did not start (exit status $rc)"
	fi

	capture 30 ip netns exec "$HOST_A" ping -c 3 -W 2 "$INNER_ECHO" ||
		fail "ping $INNER_ECHO from the Linux vxlan host failed; raw_echo said: $(cat "$echo_out")"
	expect "3 packets transmitted, 3 received" "ping over Linux's vxlan: 3 echo replies from the raw QP"
	wait "$echo_pid" || fail "raw_echo failed: $(cat "$echo_out")"
	OUT=$echo_out expect "^answered 3 echo requests" "raw_echo answered the three requests"

	ROCEMU_RUNTIME_DIR=$dir capture 10 "$ROCEMU" status || fail "rocemu status failed"
	expect "^  vxlan vni $VNI .* learned [1-9][0-9]* tx [1-9][0-9]* tx_dropped 0 rx [1-9][0-9]* rx_malformed 0 rx_other_vni 0 " \
		"the wire sent and received frames and learned the Linux host's MAC, nothing dropped"
	ROCEMU_RUNTIME_DIR=$dir capture 10 "$ROCEMU" stats || fail "rocemu stats failed"
	expect "^rocemu0 vxlan_rx_frames [1-9]" "rocemu stats counts the VXLAN frames received"
	expect "^rocemu0 vxlan_fdb_learned [1-9]" "rocemu stats counts the MACs learned"
	expect "^rocemu0 vxlan_rx_malformed 0$" "rocemu stats: no malformed VXLAN datagram"

	kill -INT "$dump_pid" 2>/dev/null
	wait "$dump_pid" 2>/dev/null
	capture 30 tcpdump -r "$pcap" -n -v || fail "tcpdump cannot read $pcap"
	expect "$ADDR_B\\.[0-9]+ > $ADDR_A\\.4789: VXLAN, flags \\[I\\] \\(0x08\\), vni $VNI" \
		"rocemu's datagrams reach the Linux host as VXLAN of VNI $VNI"
	expect "$INNER_ECHO > $INNER_LINUX: ICMP echo reply" "the inner frames are the ICMP echo replies"
	expect "$INNER_LINUX > $INNER_ECHO: ICMP echo request" "and the Linux host's requests, in VXLAN"
	if command -v tshark >/dev/null; then
		capture 30 tshark -r "$pcap" -Y "vxlan.vni == $VNI && icmp.type == 0" -T fields -E occurrence=l -e ip.src \
			-e icmp.seq || fail "tshark cannot read $pcap"
		[ "$(grep -c "^$INNER_ECHO" "$OUT")" -eq 3 ] ||
			fail "tshark decodes $(grep -c "^$INNER_ECHO" "$OUT") of 3 echo replies in VXLAN"
		ok "tshark decodes the 3 echo replies inside VXLAN VNI $VNI"
	fi
	stop_daemon "$dir"
}

add_hosts
trap 'del_hosts; cleanup' EXIT
add_vxlan
for_each_backend vxlan_ping
