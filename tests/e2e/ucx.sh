#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Unmodified UCX (Debian's ucx-utils) over rocemu: `ucx_info -d` lists
# rc_verbs and ud_verbs on rocemu0:1 (it checks /dev/infiniband/uverbsN and
# sysfs, which the shim answers for emulated devices); ucx_perftest between
# two processes, server on rocemu0 and client on rocemu1: tag_lat, tag_bw
# and ucp_put_bw over rc_verbs (UD only to wire it up, as UCX always needs:
# UCX_TLS=rc_verbs,ud_verbs:aux) and over ud_verbs, and UCT's put_bw over
# rc_verbs (UD has no RDMA at the UCT level).
. "$(dirname "${BASH_SOURCE[0]}")/lib_pair.sh"
require_programs ss
command -v ucx_info >/dev/null && command -v ucx_perftest >/dev/null ||
	skip "ucx_info, ucx_perftest not installed (Debian package ucx-utils)"
use_test_net 180
use_ports 27000
PAIR_LOSSY=

# UCX's own allocations at exit are not the shim's to answer for.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}

ucx_info_lists() {
	capture 30 "$ROCEMU" run -- ucx_info -d || fail "ucx_info -d failed"
	# "Transport: T" then "Device: D" lines, one pair per resource
	awk '/# +Transport:/ { tl = $3 } /# +Device:/ { print "resource " tl " " $3 }' "$OUT" \
		>"$WORK_DIR/resources"
	cat "$WORK_DIR/resources" >>"$COMMANDS_LOG"
	local OUT=$WORK_DIR/resources

	expect '^resource rc_verbs rocemu0:1$' "ucx_info -d lists rc_verbs on rocemu0:1"
	expect '^resource ud_verbs rocemu0:1$' "ucx_info -d lists ud_verbs on rocemu0:1"
	expect '^resource rc_verbs rocemu1:1$' "ucx_info -d lists rc_verbs on rocemu1:1"
}

# perftest TLS LANE TEST SIZE ITERS: ucx_perftest TEST over UCX_TLS=TLS; with
# LANE, the client's endpoint carries tags over LANE (UCX says so at info level).
perftest() {
	local tls=$1 lane=$2 test=$3 size=$4 iters=$5 what opts

	what="ucx_perftest -t $test -s $size over UCX_TLS=$tls"
	opts=(-t "$test" -s "$size" -n "$iters" -w 10)
	next_port
	run_pair "$what" 30 \
		env UCX_TLS="$tls" UCX_NET_DEVICES=rocemu0:1 ucx_perftest -p "$PAIR_PORT" "${opts[@]}" \
		--client \
		env UCX_TLS="$tls" UCX_NET_DEVICES=rocemu1:1 UCX_LOG_LEVEL=info \
		ucx_perftest 127.0.0.1 -p "$PAIR_PORT" "${opts[@]}"
	expect_client "^Final: +$iters " "$what: all $iters iterations"
	[ -z "$lane" ] || expect_client "ep_cfg\[[0-9]+\]: tag\($lane/rocemu1:1" "$what: tags over $lane"
	expect_neither "UCX +ERROR" "$what: no UCX error"
}

uct_put_bw() {
	local what="ucx_perftest -t put_bw -x rc_verbs -D zcopy"
	local opts=(-x rc_verbs -t put_bw -D zcopy -s 65536 -n 200 -w 10)

	next_port
	run_pair "$what" 30 \
		ucx_perftest -d rocemu0:1 -p "$PAIR_PORT" "${opts[@]}" \
		--client \
		ucx_perftest 127.0.0.1 -d rocemu1:1 -p "$PAIR_PORT" "${opts[@]}"
	expect_client "^Final: +200 " "$what: all 200 iterations"
	expect_neither "UCX +ERROR" "$what: no UCX error"
}

ucx() {
	local tls

	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	ROCEMU_LOG=info start_daemon
	ucx_info_lists
	for tls in rc_verbs,ud_verbs:aux ud_verbs; do
		perftest "$tls" "${tls%%,*}" tag_lat 8 200
		perftest "$tls" "" tag_bw 65536 100
		perftest "$tls" "" ucp_put_bw 65536 100
	done
	uct_put_bw
}

for_each_backend ucx
