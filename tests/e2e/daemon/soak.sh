#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Soak: 16 RC QP pairs between two devices carry 100k messages of SEND,
# RDMA WRITE, RDMA READ and FETCH_AND_ADD (tests/e2e/daemon/soak.c checks order,
# data and the exact sums) while both devices drop 10%, duplicate 2%,
# reorder 5% and corrupt 1% of what they send. The QPs use a short local
# ACK timeout so that losses at the tail of a burst are resent quickly.
# Then, over both delivery paths (handed over inside the daemon, and
# through the kernel), ib_write_bw on 4 QPs under duplicates and
# reordering: every message arrives, and the daemon's memory stays
# bounded (go-back-N resends do not pile up; the sanitizer's quarantine of
# freed memory is held to 1 MiB so that its RSS measures the daemon's).
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_pair.sh"
SOAK=$top_builddir/tests/e2e/daemon/soak
require_built "$SOAK"
require_programs ib_write_bw
use_test_net 32

FAULTS="drop=0.1,dup=0.02,reorder=0.05,corrupt=0.01,seed=42"
RSS_BOUND_KB=$((128 * 1024))	# the queues of both paths hold 8-16 MiB at most; 347 MiB before

# daemon_rss_kb: the daemon's resident memory in KiB.
daemon_rss_kb() {
	awk '/^VmRSS:/ { print $2 }' "/proc/$(daemon_pid)/status"
}

write_bw_run() {
	local what=$1 rss

	next_port
	run_pair "ib_write_bw -q 4 ($what)" 60 \
		ib_write_bw -d rocemu0 -x 0 -q 4 -D 4 -p "$PAIR_PORT" \
		--client ib_write_bw -d rocemu1 -x 0 -q 4 -D 4 -p "$PAIR_PORT" 127.0.0.1
	rss=$(daemon_rss_kb)
	[ "$rss" -lt "$RSS_BOUND_KB" ] || fail "daemon RSS $rss KiB after ib_write_bw ($what), over $RSS_BOUND_KB"
	ok "daemon RSS $rss KiB after ib_write_bw under dup and reorder ($what)"
}

soak() {
	local mode

	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)" ROCEMU_FAULTS=$FAULTS start_daemon
	export ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	capture 110 "$ROCEMU" run -- "$SOAK" -a -q 16 -n 100000 rocemu0 rocemu1 ||
		fail "soak under $FAULTS"
	expect "^16 QPs, 100000 messages: .* 0 failures$" "100k messages under $FAULTS, all checked"
	capture 10 "$ROCEMU" stats || fail "rocemu stats"
	expect "^rocemu0 fault_corrupted [1-9]" "corrupted packets were injected"
	expect "^rocemu1 rx_icrc_errors [1-9]" "the receiver dropped them on their ICRC"
	expect "^rocemu0 retransmitted_packets [1-9]" "the requester resent"
	stop_daemon "$ROCEMU_RUNTIME_DIR"

	for mode in local udp; do
		ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=1 \
			ROCEMU_DELIVERY=$mode ROCEMU_FAULTS="dup=0.02,reorder=0.02" start_daemon
		write_bw_run "$mode"
		stop_daemon "$ROCEMU_RUNTIME_DIR"
	done
}

for_each_backend soak
