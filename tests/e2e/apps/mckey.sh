#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Unmodified mckey (librdmacm's multicast example): two receivers (rocemu1,
# rocemu2) join 239.1.2.4 through rdma_join_multicast and get all 10
# messages of a sender on rocemu0, which joins too and sends to the
# group's QPN 0xFFFFFF; each receiver's capture shows them as IP
# multicast to the group, decoded as InfiniBand.
# Multicast over loopback: in a network namespace of its own (lib_mcast_netns.sh).
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_mcast_netns.sh"
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_pair.sh"
require_programs mckey
use_test_net 244
GROUP=239.1.2.4

mckey_group() {
	local pcap=$WORK_DIR/pcap-$BACKEND i pids=() out dev

	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2),rocemu2=$(addr 3)"
	export ROCEMU_DEVICES
	ROCEMU_PCAP=$pcap start_daemon
	for i in 2 3; do
		out=$WORK_DIR/receiver$i-$BACKEND.out
		echo "+ mckey -m $GROUP -b $(addr "$i") -C 10 &" >>"$COMMANDS_LOG"
		run_with_timeout 30 "$ROCEMU" run -- stdbuf -oL mckey -m "$GROUP" -b "$(addr "$i")" -C 10 \
			>"$out" 2>&1 &
		pids+=($!)
		BACKGROUND_PIDS+=($!)
	done
	# mckey says so once MULTICAST_JOIN is read, which attaches its QP: then it can receive.
	for i in 2 3; do
		out=$WORK_DIR/receiver$i-$BACKEND.out
		for _ in $(seq 100); do
			grep -q '^receiving data transfers' "$out" && break
			sleep 0.1
		done
		grep -q '^receiving data transfers' "$out" || { cat "$out" >>"$COMMANDS_LOG"; fail "receiver on $(addr "$i") did not join"; }
	done
	capture 30 "$ROCEMU" run -- mckey -m "$GROUP" -b "$(addr 1)" -s -C 10 || fail "the mckey sender failed"
	expect "^mckey: joined dgid: ::ffff:$GROUP mlid 0x0 sl 0$" "the sender joined $GROUP (MGID ::ffff:$GROUP)"
	expect "^return status 0$" "the sender sent 10 messages to the group"
	for i in 0 1; do
		wait "${pids[$i]}" || fail "receiver $((i + 2)) exited with status $?"
		forget_pid "${pids[$i]}"
		OUT=$WORK_DIR/receiver$((i + 2))-$BACKEND.out
		cat "$OUT" >>"$COMMANDS_LOG"
		expect "^data transfers complete$" "receiver on $(addr $((i + 2))): all 10 messages"
		expect "^return status 0$" "receiver on $(addr $((i + 2))): status 0"
	done
	stop_daemon "$ROCEMU_RUNTIME_DIR"
	command -v tshark >/dev/null || return 0
	for dev in rocemu1 rocemu2; do
		capture 30 tshark -r "$pcap/$dev.pcap" "${TSHARK_IB[@]}" \
			-Y "ip.dst == $GROUP && infiniband.bth.destqp == 0xffffff" || fail "tshark cannot read $dev.pcap"
		[ "$(grep -c "UD Send Only" "$OUT")" -eq 10 ] ||
			fail "$dev.pcap: $(grep -c "UD Send Only" "$OUT") of 10 UD sends to $GROUP QPN 0xFFFFFF"
		ok "$dev.pcap: the 10 UD sends to $GROUP, QPN 0xFFFFFF, decoded as InfiniBand"
		capture 30 tshark -r "$pcap/$dev.pcap" "${TSHARK_IB[@]}" -Y _ws.malformed || fail "tshark cannot filter"
		expect_none '^ *[0-9]+ ' "$dev.pcap: no malformed frame"
	done
}

for_each_backend mckey_group
