# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# shellcheck shell=bash disable=SC2034
# Sourced by every end-to-end test. A test gets its own network namespace
# where one can be made, its own runtime directory per backend and its own
# loopback addresses (so tests run in parallel),
# a timeout on every process, and on failure the commands it ran with
# their output and the daemon log. Exit codes: 0 pass, 1 fail, 77 skip.

set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib_netns.sh"

HARNESS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
: "${top_srcdir:=$(cd "$HARNESS_DIR/../../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
ROCEMU=$top_builddir/tools/rocemu
ROCEMUD=$top_builddir/tools/rocemud
VERBS_CONTROL=$top_builddir/tests/e2e/verbs/verbs_control
DLOPEN_VERBS=$top_builddir/tests/e2e/verbs/dlopen_verbs
URING_PROBE=$top_builddir/tests/e2e/harness/uring_probe
TEST_NAME=$(basename "$0" .sh)

# The backends to run: the one ROCEMU_TEST_BACKEND names (NAME.BACKEND.sh
# sets it), else both. A ROCEMU_NET of the caller's shell leaves the other
# backend untested: a skip.
TEST_BACKENDS=${ROCEMU_TEST_BACKEND:-io_uring epoll}
FORCED_NET=${ROCEMU_NET:-}

# Every setting comes from the test itself, none from the caller's shell.
unset ROCEMU_DEVICES ROCEMU_RUNTIME_DIR ROCEMU_NET ROCEMU_LOG ROCEMU_ONLY \
	ROCEMU_DAEMON ROCEMU_SHIM ROCEMU_IDLE_EXIT ROCEMU_PCAP ROCEMU_PCAP_SNAPLEN ROCEMU_FAULTS \
	ROCEMU_DELIVERY ROCEMU_BUSY_POLL ROCEMU_WIRE ROCEMU_LIMITS ROCEMU_DMA

WORK_DIR=$(mktemp -d "${TMPDIR:-/tmp}/rocemu-$TEST_NAME.XXXXXX") || exit 99
COMMANDS_LOG=$WORK_DIR/commands.log
OUT=$WORK_DIR/out		# output of the last `capture`
RUNTIME_DIRS=()
BACKGROUND_PIDS=()
TEST_NET=
BACKEND=
BACKEND_INDEX=0
DAEMON_WRAP=()		# words before rocemud: `ip netns exec NS` runs it as another host
: >"$COMMANDS_LOG"

dump_logs() {
	local dir

	echo "---- commands run, with their output"
	cat "$COMMANDS_LOG"
	for dir in "${RUNTIME_DIRS[@]}"; do
		if [ -s "$dir/rocemud.log" ]; then
			echo "---- daemon log $dir/rocemud.log"
			cat "$dir/rocemud.log"
		fi
	done
}

# cli_refused WHAT ERE ARGS...: `rocemu ARGS` fails and says ERE.
cli_refused() {
	local what=$1 ere=$2

	shift 2
	if capture 10 "$ROCEMU" "$@"; then
		fail "$what: rocemu $* succeeded"
	fi
	expect "$ere" "$what: refused, saying why"
}

fail() {
	echo "FAIL: $TEST_NAME${BACKEND:+ ($BACKEND)}: $*"
	dump_logs
	exit 1
}

skip() {
	echo "SKIP: $TEST_NAME${BACKEND:+ ($BACKEND)}: $*"
	exit 77
}

ok() {
	echo "ok: $*"
}

# run_with_timeout SECS CMD...: CMD killed after SECS (and -9 five seconds later).
run_with_timeout() {
	local secs=$1

	shift
	timeout -k 5 "$secs" "$@"
}

# capture SECS CMD...: run CMD under a timeout; stdout and stderr go to $OUT and the log.
capture() {
	local secs=$1 rc

	shift
	echo "+ ${ROCEMU_NET:+ROCEMU_NET=$ROCEMU_NET }${ROCEMU_DEVICES:+ROCEMU_DEVICES=$ROCEMU_DEVICES }$*" >>"$COMMANDS_LOG"
	run_with_timeout "$secs" "$@" >"$OUT" 2>&1
	rc=$?
	cat "$OUT" >>"$COMMANDS_LOG"
	[ "$rc" -eq 0 ] || echo "(exit status $rc)" >>"$COMMANDS_LOG"
	return "$rc"
}

# expect ERE WHAT: a line of the last output matches ERE.
expect() {
	grep -Eq -- "$1" "$OUT" || fail "$2: no line matches /$1/"
	ok "$2"
}

# run_fuzzer PROGRAM PACKETS SEED: PROGRAM rocemu0 rocemu1 ROCEMU PACKETS SEED
# (a fuzzer of tests/e2e/harness/fuzz.h) against a daemon of two devices: every
# check passes, the packets reached the daemon, and it lives on with no
# sanitizer report.
run_fuzzer() {
	local name

	name=$(basename "$1")
	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	start_daemon
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} capture 240 "$ROCEMU" run -- \
		"$1" rocemu0 rocemu1 "$ROCEMU" "$2" "$3" || fail "$name failed"
	expect_checks_passed
	expect "^ok: [0-9]+ fuzz packets reached the daemon" \
		"$(grep -Eo '[0-9]+ fuzz packets reached the daemon' "$OUT")"
	kill -0 "$DAEMON_PID" 2>/dev/null || fail "rocemud is gone"
	! grep -Eq 'AddressSanitizer|LeakSanitizer|runtime error' "$ROCEMU_RUNTIME_DIR/rocemud.log" ||
		fail "the daemon reports a sanitizer error"
	ok "rocemud runs, no sanitizer report"
}

# expect_checks_passed [WHAT]: the last output is a checking program's
# (tests/e2e/harness/verbs_pair.c's run_checks) that ended "0 failed".
expect_checks_passed() {
	expect "^0 failed$" "${1:+$1: }every check passed ($(grep -c '^ok: ' "$OUT") checks)"
}

# run_checks_between PROG DEV_A DEV_B: our checking program PROG from DEV_A
# to DEV_B under `rocemu run`, every check passed. Its leaks count (rocemu
# run turns them off for distribution programs).
run_checks_between() {
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} capture 60 "$ROCEMU" run -- "$1" "$2" "$3" ||
		fail "$(basename "$1") $2 $3 failed"
	expect_checks_passed "$2 -> $3"
}

# expect_fixed TEXT WHAT: a line of the last output contains TEXT as it is.
expect_fixed() {
	grep -Fq -- "$1" "$OUT" || fail "$2: no line contains '$1'"
	ok "$2"
}

# expect_none ERE WHAT: no line of the last output matches ERE.
expect_none() {
	! grep -Eq -- "$1" "$OUT" || fail "$2: a line matches /$1/"
	ok "$2"
}

require_programs() {
	local prog

	for prog in "$@"; do
		command -v "$prog" >/dev/null || skip "$prog not installed (Debian package ibverbs-utils)"
	done
}

require_built() {
	local file

	for file in "$@"; do
		[ -x "$file" ] || fail "$file is not built"
	done
}

# use_test_net N: this test's addresses are 127.0.N.x (past 255, 127.N/256.N%256.x); every test picks its own N.
use_test_net() {
	TEST_NET=$1
}

# addr I: the I-th address of this test; each backend gets its own range,
# so that the tests of both backends run at the same time.
addr() {
	echo "127.$((TEST_NET / 256)).$((TEST_NET % 256)).$((BACKEND_INDEX * 100 + $1))"
}

# node_guid_of A.B.C.D: the node GUID (EUI-64 of MAC 02:00:A:B:C:D) as ibv_devinfo prints it.
node_guid_of() {
	local IFS=.

	# shellcheck disable=SC2086
	set -- $1
	printf '0200:%02xff:fe%02x:%02x%02x\n' "$1" "$2" "$3" "$4"
}

# forget_pid PID: PID is reaped; cleanup must not signal it (the number may be reused).
forget_pid() {
	local pid kept=()

	for pid in "${BACKGROUND_PIDS[@]}"; do
		[ "$pid" = "$1" ] || kept+=("$pid")
	done
	BACKGROUND_PIDS=("${kept[@]}")
}

# wait_ready FILE PID SECS: wait (at most SECS) until FILE has a line
# starting with "ready"; false when PID exits first or time runs out.
wait_ready() {
	for _ in $(seq $(($3 * 10))); do
		grep -q '^ready' "$1" && return 0
		kill -0 "$2" 2>/dev/null || break
		sleep 0.1
	done
	grep -q '^ready' "$1"
}

# start_held OUT SECS CMD...: CMD under `rocemu run` and a SECS timeout in
# the background, output in OUT, stdin a fifo held open until release_held
# (CMD holds its objects until then); waits (at most 90 s) until OUT has a
# line starting with "ready": false when it has none. Sets HELD_PID.
start_held() {
	local out=$1 secs=$2

	shift 2
	mkfifo "$out.in"
	echo "+ rocemu run -- ${*##*/} <fifo &" >>"$COMMANDS_LOG"
	run_with_timeout "$secs" "$ROCEMU" run -- "$@" <"$out.in" >"$out" 2>&1 &
	HELD_PID=$!
	BACKGROUND_PIDS+=("$HELD_PID")
	exec {HELD_FD}>"$out.in"
	wait_ready "$out" "$HELD_PID" 90
	local ready=$?
	cat "$out" >>"$COMMANDS_LOG"
	return $ready
}

# release_held: close the held command's stdin and wait for it: its exit status.
release_held() {
	local rc=0

	exec {HELD_FD}>&-
	wait "$HELD_PID" || rc=$?
	forget_pid "$HELD_PID"
	return $rc
}

# stop_daemon DIR: ask the daemon of runtime dir DIR, if any, to exit.
stop_daemon() {
	ROCEMU_RUNTIME_DIR=$1 run_with_timeout 10 "$ROCEMU" stop >/dev/null 2>&1 || true
}

# end_daemon: stop the daemon start_daemon started and reap it, so that the next one may start.
end_daemon() {
	stop_daemon "$ROCEMU_RUNTIME_DIR"
	wait "$DAEMON_PID"
	forget_pid "$DAEMON_PID"
}

# daemon_answers: `rocemu status` gets an answer in the current runtime dir.
daemon_answers() {
	run_with_timeout 5 "$ROCEMU" status >/dev/null 2>&1
}

# daemon_pid: the pid of the daemon of the current runtime dir.
daemon_pid() {
	run_with_timeout 5 "$ROCEMU" status | awk '$1 == "rocemud" && $2 == "pid" { print $3 }'
}

# rcv_bytes DEV: what DEV has received, in bytes (port_rcv_data counts 4-byte words).
rcv_bytes() {
	run_with_timeout 5 "$ROCEMU" stats | awk -v dev="$1" '$1 == dev && $2 == "port_rcv_data" { print $3 * 4 }'
}

# start_daemon: run tools/rocemud for the current runtime dir in the
# background (for at most DAEMON_LIMIT seconds, default 300) and wait
# (bounded) until it answers. Sets DAEMON_PID.
start_daemon() {
	echo "+ rocemud & (ROCEMU_NET=$ROCEMU_NET ROCEMU_DEVICES=${ROCEMU_DEVICES:-})" >>"$COMMANDS_LOG"
	# timeout itself, not a subshell running it: cleanup's kill reaches the daemon.
	timeout -k 5 "${DAEMON_LIMIT:-300}" "${DAEMON_WRAP[@]}" "$ROCEMUD" >>"$ROCEMU_RUNTIME_DIR/rocemud.log" 2>&1 &
	DAEMON_PID=$!
	BACKGROUND_PIDS+=("$DAEMON_PID")
	for _ in $(seq 100); do
		daemon_answers && return 0
		kill -0 "$DAEMON_PID" 2>/dev/null || fail "rocemud exited before answering"
		sleep 0.1
	done
	fail "rocemud does not answer after 10 s"
}

# for_each_dma FUNCTION: FUNCTION, which starts the daemon, once with a
# daemon copying by pid through each client's guard (ROCEMU_DMA=pid) and
# once with one copying through /proc/PID/mem alone (ROCEMU_DMA=mem); its
# debug log says which it did.
for_each_dma() {
	local fn=$1 dma guarded log=$ROCEMU_RUNTIME_DIR/rocemud.log

	for dma in pid mem; do
		echo "== ROCEMU_DMA=$dma"
		: >"$log"
		DAEMON_WRAP=(env ROCEMU_DMA="$dma" ROCEMU_LOG=debug)
		"$fn"
		stop_daemon "$ROCEMU_RUNTIME_DIR"
		DAEMON_WRAP=()
		guarded=$(grep -c "copies by pid through its guard" "$log")
		if [ "$dma" = pid ]; then
			[ "$guarded" -gt 0 ] || fail "ROCEMU_DMA=pid: no client's copies went by pid"
			ok "ROCEMU_DMA=pid: $guarded address spaces were reached by pid through their guard"
		else
			[ "$guarded" = 0 ] || fail "ROCEMU_DMA=mem: $guarded address spaces were reached by pid"
			ok "ROCEMU_DMA=mem: every copy went through /proc/PID/mem"
		fi
	done
}

io_uring_usable() {
	"$URING_PROBE" 2>"$WORK_DIR/uring_probe.err"
}

# backend_unusable BACKEND: why BACKEND cannot be tested here; nothing when it can.
backend_unusable() {
	if [ -n "$FORCED_NET" ] && [ "$FORCED_NET" != "$1" ]; then
		echo "ROCEMU_NET=$FORCED_NET leaves the $1 backend untested"
	elif [ "$1" = io_uring ] && ! io_uring_usable; then
		echo "io_uring cannot be used here: $(cat "$WORK_DIR/uring_probe.err")"
	fi
}

# for_each_backend FUNCTION: run FUNCTION once per backend of this run
# (TEST_BACKENDS), each time with ROCEMU_NET set, a fresh runtime dir whose
# daemon is stopped afterwards, and addresses of its own (see addr). A
# backend that cannot run here is a skip: exit 77 once the others ran.
for_each_backend() {
	local fn=$1 backend why skipped=

	[ -n "$TEST_NET" ] || fail "use_test_net was not called"
	case $FORCED_NET in
	'' | io_uring | epoll) ;;
	*) fail "ROCEMU_NET=$FORCED_NET is neither io_uring nor epoll" ;;
	esac
	for backend in $TEST_BACKENDS; do
		BACKEND=$backend
		BACKEND_INDEX=$([ "$backend" = io_uring ] && echo 0 || echo 1)
		why=$(backend_unusable "$backend")
		if [ -n "$why" ]; then
			echo "SKIP: $TEST_NAME ($backend): $why"
			skipped+=" $backend"
			continue
		fi
		export ROCEMU_NET=$backend
		export ROCEMU_RUNTIME_DIR=$WORK_DIR/run-$backend
		mkdir -m 0700 "$ROCEMU_RUNTIME_DIR" || fail "mkdir $ROCEMU_RUNTIME_DIR"
		RUNTIME_DIRS+=("$ROCEMU_RUNTIME_DIR")
		echo "== $TEST_NAME with the $backend backend"
		"$fn"
		stop_daemon "$ROCEMU_RUNTIME_DIR"
	done
	BACKEND=
	[ -z "$skipped" ] || exit 77
}

# python3 -c "$LADDER_ARROWS" SVG: parses a `rocemu ladder` SVG (its root
# must be <svg>) and prints its arrows in order, one "class|label" line each.
LADDER_ARROWS=$(cat <<'PY'
import sys
import xml.etree.ElementTree as ET

ns = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == ns + "svg", root.tag
for g in root.iter(ns + "g"):
    label = "".join(t.text or "" for t in g.iter(ns + "text") if t.get("class") != "time")
    print(f"{g.get('class')}|{label}")
PY
)

cleanup() {
	local dir pid

	for dir in "${RUNTIME_DIRS[@]}"; do
		stop_daemon "$dir"
	done
	for pid in "${BACKGROUND_PIDS[@]}"; do
		kill "$pid" 2>/dev/null
	done
	for pid in "${BACKGROUND_PIDS[@]}"; do
		wait "$pid" 2>/dev/null
	done
	rm -rf "$WORK_DIR"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

require_built "$ROCEMU" "$ROCEMUD" "$URING_PROBE"
