# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# shellcheck shell=bash
# Sourced by the tests that run unmodified UCX (Debian's ucx-utils) between
# two devices of one daemon: `ucx_info -d` under rocemu, and ucx_perftest with
# the server on rocemu0 and the client on rocemu1, each checked for all its
# iterations, no UCX error, and the bytes the devices received.
. "$(dirname "${BASH_SOURCE[0]}")/lib_pair.sh"
require_programs ss
command -v ucx_info >/dev/null && command -v ucx_perftest >/dev/null ||
	skip "ucx_info, ucx_perftest not installed (Debian package ucx-utils)"
PAIR_LOSSY=

# UCX's own allocations at exit are not the shim's to answer for.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}

# ucx_daemon_start [MODEL0 MODEL1]: a daemon with rocemu0 and rocemu1 on this
# test's first two addresses, playing the adapters named (cx5, cx3; default cx5).
ucx_daemon_start() {
	ROCEMU_DEVICES="rocemu0=$(addr 1)@${1:-cx5},rocemu1=$(addr 2)@${2:-cx5}"
	export ROCEMU_DEVICES
	ROCEMU_LOG=info start_daemon
}

# ucx_resources: `ucx_info -d` under rocemu; OUT then holds one
# "resource TRANSPORT DEVICE" line per resource UCX lists.
ucx_resources() {
	capture 30 "$ROCEMU" run -- ucx_info -d || fail "ucx_info -d failed"
	# "Transport: T" then "Device: D" lines, one pair per resource
	awk '/# +Transport:/ { tl = $3 } /# +Device:/ { print "resource " tl " " $3 }' "$OUT" \
		>"$WORK_DIR/resources"
	cat "$WORK_DIR/resources" >>"$COMMANDS_LOG"
	mv "$WORK_DIR/resources" "$OUT"
}

# ucp_perftest TLS LANE TEST SIZE ITERS: ucx_perftest TEST, a UCP test, over
# UCX_TLS=TLS; with LANE, the client's endpoint carries TEST's operations
# (tag, rma, rma_am or am) over LANE on rocemu1:1, as UCX says at info level.
ucp_perftest() {
	local tls=$1 lane=$2 test=$3 size=$4 iters=$5 what opts kind

	what="ucx_perftest -t $test -s $size over UCX_TLS=$tls"
	opts=(-t "$test" -s "$size" -n "$iters" -w 10)
	case $test in
	tag_*) kind=tag ;;
	ucp_put_* | ucp_get*) kind='rma(_am)?' ;;	# rma_am: UCP's puts over active messages (UD)
	*) kind=am ;;
	esac
	perftest_pair "$what" "$iters" "$size" \
		env UCX_TLS="$tls" UCX_NET_DEVICES=rocemu0:1 ucx_perftest -p PORT "${opts[@]}" \
		--client \
		env UCX_TLS="$tls" UCX_NET_DEVICES=rocemu1:1 UCX_LOG_LEVEL=info \
		ucx_perftest 127.0.0.1 -p PORT "${opts[@]}"
	[ -z "$lane" ] || expect_client "ep_cfg\[[0-9]+\]: .*$kind\($lane/rocemu1:1" \
		"$what: $kind over $lane"
}

# uct_perftest TL TEST LAYOUT SIZE ITERS: ucx_perftest TEST, a UCT test, on transport TL itself.
uct_perftest() {
	local tl=$1 test=$2 layout=$3 size=$4 iters=$5
	local opts=(-x "$tl" -t "$test" -D "$layout" -s "$size" -n "$iters" -w 10)

	perftest_pair "ucx_perftest -x $tl -t $test -D $layout -s $size" "$iters" "$size" \
		ucx_perftest -d rocemu0:1 -p PORT "${opts[@]}" \
		--client \
		ucx_perftest 127.0.0.1 -d rocemu1:1 -p PORT "${opts[@]}"
}

# perftest_pair WHAT ITERS SIZE SERVER... --client CLIENT...: run_pair with
# PORT replaced by a free port; the client's report ends with all ITERS
# iterations (its Final line goes to the test's output), no side logs a UCX
# error, and the two devices received at least ITERS x SIZE bytes (UCP's
# tests send from the client, UCT's from the server).
perftest_pair() {
	local what=$1 iters=$2 size=$3 before after args=() arg

	shift 3
	next_port
	for arg in "$@"; do
		args+=("${arg/#PORT/$PAIR_PORT}")
	done
	before=$(($(rcv_bytes rocemu0) + $(rcv_bytes rocemu1)))
	run_pair "$what" 30 "${args[@]}"
	after=$(($(rcv_bytes rocemu0) + $(rcv_bytes rocemu1)))
	expect_client "^Final: +$iters " "$what: all $iters iterations"
	grep -E "^Final: " "$CLIENT_OUT" | sed "s|^|$what: |"
	expect_neither "UCX +ERROR" "$what: no UCX error"
	[ "$((after - before))" -ge "$((iters * size))" ] ||
		fail "$what: the devices received $((after - before)) bytes, less than $((iters * size))"
	ok "$what: the devices received $((after - before)) bytes for $((iters * size)) of messages"
}
