#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# UD multicast (tests/e2e/ud_uc/mcast.c): a group with four receivers in two
# processes (three QPs on rocemu1, one attached twice, one receiving
# through an SRQ, and one on rocemu2),
# a sender on rocemu0 attached with IBV_QP_CREATE_BLOCK_SELF_MCAST_LB,
# EBUSY on destroy while attached, nothing after detach; the capture shows
# IP multicast to 239.1.2.3 with destination QPN 0xFFFFFF, decoded by tshark;
# a UD QP created with IBV_QP_CREATE_SOURCE_QPN sends with that QPN, and
# without CAP_NET_RAW gets EPERM.
# Multicast over loopback: in a network namespace of its own (lib_mcast_netns.sh).
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_mcast_netns.sh"
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_pair.sh"
MCAST=$top_builddir/tests/e2e/ud_uc/mcast
require_built "$MCAST"
use_test_net 170

mcast() {
	local pcap_dir=$WORK_DIR/pcap-$BACKEND member_out=$WORK_DIR/member-$BACKEND.out pid frames

	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2),rocemu2=$(addr 3)"
	export ROCEMU_DEVICES
	ROCEMU_LOG=info ROCEMU_PCAP=$pcap_dir start_daemon
	# Our own program: leaks count here (rocemu run turns them off for distribution programs).
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} run_with_timeout 60 \
		"$ROCEMU" run -- "$MCAST" member rocemu2 >"$member_out" 2>&1 &
	pid=$!
	BACKGROUND_PIDS+=("$pid")
	wait_ready "$member_out" "$pid" 10 || { cat "$member_out" >>"$COMMANDS_LOG"; fail "the member process is not ready"; }
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} capture 60 "$ROCEMU" run -- "$MCAST" main rocemu0 rocemu1 ||
		fail "mcast main rocemu0 rocemu1 failed"
	expect "^0 failed$" "every check of the sender and the three receivers passed ($(grep -c '^ok: ' "$OUT") checks)"
	wait "$pid"
	forget_pid "$pid"
	cp "$member_out" "$OUT"
	cat "$OUT" >>"$COMMANDS_LOG"
	expect "^0 failed$" "the member in the other process got every message once"
	if command -v setpriv >/dev/null; then
		capture 30 setpriv --bounding-set=-net_raw -- "$ROCEMU" run -- "$MCAST" unprivileged rocemu0 ||
			fail "mcast unprivileged rocemu0 failed"
		expect "^0 failed$" "without CAP_NET_RAW a source QPN is refused (EPERM)"
	else
		echo "skip the CAP_NET_RAW check: setpriv is not installed"
	fi
	stop_daemon "$ROCEMU_RUNTIME_DIR"
	if ! command -v tshark >/dev/null; then
		echo "skip the capture check: tshark is not installed"
		return
	fi
	# UD Send Only (100)
	expect_decoded "$pcap_dir/rocemu0.pcap" '^eth:.*:infiniband.*[[:space:]]100$' "UD Send"
	expect_decoded "$pcap_dir/rocemu2.pcap" '^eth:.*:infiniband.*[[:space:]]100$' "UD Send"
	capture 30 tshark -r "$pcap_dir/rocemu2.pcap" -T fields -e ip.dst -e infiniband.bth.destqp ||
		fail "tshark cannot read rocemu2.pcap"
	# 6 while the member counts, then maybe the source-QPN one before it detached.
	frames=$(grep -c '^[0-9]' "$OUT")
	[ "$frames" -ge 6 ] &&
		[ "$(grep -Ec '^239\.1\.2\.3[[:space:]]+(16777215|0x0*ffffff)$' "$OUT")" -eq "$frames" ] ||
		fail "rocemu2.pcap: not every one of $frames datagrams to 239.1.2.3, QPN 0xFFFFFF"
	ok "rocemu2 received $frames datagrams, all to 239.1.2.3 with destination QPN 0xFFFFFF"
}

for_each_backend mcast
