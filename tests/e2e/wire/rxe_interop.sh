#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# rocemu against the Linux kernel's own Soft-RoCE, the independent judge of
# its wire format: a QEMU guest (tools/rxe-vm: Debian's kernel under TCG,
# rdma_rxe on virtio-net) on a tap device of this test's network namespace,
# rocemu0 on the tap's host address. Each case runs both ways, the server
# on rxe and the client on rocemu, then the reverse, with unmodified
# programs: ibv_rc_pingpong -c at 1 B, 4 KiB and 64 KiB, ibv_ud_pingpong,
# ibv_uc_pingpong, ibv_srq_pingpong, perftest's ib_write_bw, ib_read_bw,
# ib_send_bw, ib_atomic_bw and ib_send_lat (READs and atomics with -o 16 on
# both sides: rxe offers 128 outstanding, a ConnectX-5 takes 16), rping,
# ucmatose and udaddy. A case passes when both sides exit 0, print what they
# should, and neither side threw a packet away: rxe finds no bad ICRC and
# drops nothing it received (probes on rxe_rcv and rxe_icrc_check against
# its rcvd_pkts: rxe has no ICRC counter), rocemu neither (rocemu stats);
# a late resend to a QP its program already destroyed, which any NIC
# drops, excepted on both sides (rocemu's rx_no_qp, the lines rxe logs).
# Last, ib_send_bw and ib_read_bw with 5 % of rocemu's packets dropped,
# which rxe must recover from as responder and as requester, with nothing
# thrown away either.
#
# A table gives each case's result and the figure its client printed, or
# why it failed; a failed case's outputs, the guest's dmesg and counters go
# to the log. The kernel's capture of the tap (offloads off: finished
# checksums, real segments) and rocemu's own (ROCEMU_PCAP, whole frames) are
# handed to compare_captures, and kept with the console log and the table in
# tests/e2e/wire/rxe_interop-artifacts/BACKEND of the build tree.
#
# Root, /dev/net/tun, qemu-system-x86_64, tcpdump, ethtool and a Debian
# kernel package (fetched once and cached by tools/rxe-vm) or a skip. The
# guest has no KVM: 15 to 40 s to boot, seconds per case, so iteration
# counts are small. The epoll backend runs a reduced set (EPOLL_CASES): the
# backends differ in how the daemon's packets leave and arrive, not in the
# transports, so it keeps one case of each kind of packet train (single
# packets and multi-packet messages both ways, READ responses, UD, the CM)
# and the faults, and leaves out what only repeats them (UC, SRQ, SEND, the
# atomics, latency, ucmatose, udaddy): under TCG on two cores the whole set
# twice would take too long for one `make check`.
NETNS_REQUIRED=1
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_pair.sh"
use_test_net 253
RXE_VM=$top_srcdir/tools/rxe-vm
ARTIFACTS=${RXE_INTEROP_ARTIFACTS:-$top_builddir/tests/e2e/wire/rxe_interop-artifacts}
VM_LIMIT=2400		# seconds the guest, the tap's capture and the daemon may live, per backend
BOOT_LIMIT=240
FAULTS=drop=0.05,seed=11
CASE_SECS=20		# each program's limit: a case that works takes a few seconds
EPOLL_CASES="rc_pingpong ud_pingpong write_bw read_bw rping faults"
TAPS=()
FIXED_PORT=		# a case's TCP port when its programs have no option for it
CASE_ROWS=()
CASE_FAILS=0
CASE_N=0

# require_tool PROGRAM PACKAGE: a skip without PROGRAM.
require_tool() {
	command -v "$1" >/dev/null || skip "$1 is not installed (Debian package $2)"
}

[ "$(id -u)" -eq 0 ] || skip "needs root: a tap device, QEMU on it and tcpdump"
[ -c /dev/net/tun ] || skip "no /dev/net/tun"
require_tool qemu-system-x86_64 qemu-system-x86
require_tool tcpdump tcpdump
require_tool ethtool ethtool
require_tool ibv_rc_pingpong ibverbs-utils
require_tool ib_write_bw perftest
require_tool rping rdmacm-utils
require_tool ss iproute2

# ---- the guest ----

# guest_image: IMAGE, the guest's kernel and initramfs (a skip where none can be had).
guest_image() {
	local err=$WORK_DIR/image.err rc=0

	IMAGE=$(run_with_timeout 900 "$RXE_VM" image 2>"$err") || rc=$?
	{ echo "+ tools/rxe-vm image"; cat "$err"; echo "$IMAGE"; } >>"$COMMANDS_LOG"
	[ "$rc" -ne 3 ] || skip "no guest image: $(tail -n 1 "$err")"
	[ "$rc" -eq 0 ] || fail "tools/rxe-vm image failed: $(tail -n 1 "$err")"
}

# vm SECS SCRIPT: SCRIPT in the guest under a limit of SECS; output in $OUT and the log.
vm() {
	local secs=$1

	shift
	capture $((secs + 20)) "$RXE_VM" exec -a "$GUEST_IP" -t "$secs" "$@"
}

# start_capture: tcpdump on the tap, whole frames, each written as it comes.
start_capture() {
	local err=$WORK_DIR/tcpdump-$BACKEND.err

	echo "+ tcpdump -i $TAP -U -s 0 -w $TAP_PCAP &" >>"$COMMANDS_LOG"
	# timeout itself in the background, not a function's subshell running it: a kill of the pid reaches it.
	timeout -k 5 "$VM_LIMIT" tcpdump -i "$TAP" -U -s 0 -w "$TAP_PCAP" 2>"$err" &
	TCPDUMP_PID=$!
	BACKGROUND_PIDS+=("$TCPDUMP_PID")
	for _ in $(seq 100); do
		grep -q 'listening on' "$err" && return 0
		kill -0 "$TCPDUMP_PID" 2>/dev/null || break
		sleep 0.1
	done
	cat "$err" >>"$COMMANDS_LOG"
	fail "tcpdump does not capture on $TAP"
}

# start_guest: the tap, its capture, and the guest booted until it answers.
start_guest() {
	local started=$SECONDS

	capture 20 "$RXE_VM" tap add "$TAP" "$HOST_IP/24" || fail "cannot set up tap $TAP"
	TAPS+=("$TAP")
	capture 10 ethtool -k "$TAP"
	expect "^tx-checksumming: off" "$TAP: no checksum offload (the capture shows finished checksums)"
	expect "^generic-segmentation-offload: off" "$TAP: no segmentation offload (the capture shows real segments)"
	start_capture
	CONSOLE=$WORK_DIR/console-$BACKEND.log
	echo "+ tools/rxe-vm qemu $IMAGE $TAP $GUEST_IP/24 $CONSOLE &" >>"$COMMANDS_LOG"
	timeout -k 5 "$VM_LIMIT" "$RXE_VM" qemu "$IMAGE" "$TAP" "$GUEST_IP/24" "$CONSOLE" \
		>"$WORK_DIR/qemu-$BACKEND.log" 2>&1 &
	VM_PID=$!
	BACKGROUND_PIDS+=("$VM_PID")
	if ! capture $((BOOT_LIMIT + 30)) "$RXE_VM" wait -a "$GUEST_IP" "$CONSOLE" "$VM_PID" "$BOOT_LIMIT"; then
		{ echo "---- console"; tail -n 40 "$CONSOLE"; cat "$WORK_DIR/qemu-$BACKEND.log"; } >>"$COMMANDS_LOG"
		fail "the guest did not come up"
	fi
	BOOT_SECS=$((SECONDS - started))
	ok "the guest ($(cat "$IMAGE/version")) answers after $BOOT_SECS s"
}

# stop_guest: a clean poweroff (bounded), then qemu is gone; the capture ends.
stop_guest() {
	capture 20 "$RXE_VM" poweroff -a "$GUEST_IP"
	wait_exit "$VM_PID" 30 || kill "$VM_PID" 2>/dev/null
	wait "$VM_PID"
	echo "(qemu exit status $?)" >>"$COMMANDS_LOG"
	forget_pid "$VM_PID"
	kill "$TCPDUMP_PID" 2>/dev/null
	wait "$TCPDUMP_PID"
	forget_pid "$TCPDUMP_PID"
	cat "$WORK_DIR/tcpdump-$BACKEND.err" >>"$COMMANDS_LOG"
}

# RXE_GID_SCRIPT: prints "gid index N", N rxe0's RoCE v2 GID of an IPv4 address (::ffff:a.b.c.d).
RXE_GID_SCRIPT='P=/sys/class/infiniband/rxe0/ports/1
for t in $P/gid_attrs/types/*; do
	i=${t##*/}
	[ "$(cat "$t" 2>/dev/null)" = "RoCE v2" ] || continue
	case $(cat "$P/gids/$i") in 0000:0000:0000:0000:0000:ffff:*) echo "gid index $i"; exit 0 ;; esac
done
exit 1'

# guest_facts: the harness itself works: rxe0 active, its GID, rocemu0's, a ping each way.
guest_facts() {
	vm 30 'ibv_devinfo -v -d rxe0' || fail "ibv_devinfo in the guest failed"
	expect "state:[[:space:]]+PORT_ACTIVE" "rxe0 is active in the guest"
	expect "active_mtu:[[:space:]]+1024 " "rxe0 runs at IB MTU 1024 on a link of MTU 1500"
	vm 10 "$RXE_GID_SCRIPT" || fail "rxe0 has no RoCE v2 GID of $GUEST_IP"
	RXE_GID=$(awk '$1 == "gid" { print $3 }' "$OUT")
	ok "rxe0's RoCE v2 GID of $GUEST_IP has index $RXE_GID"
	capture 20 "$ROCEMU" run -- ibv_devinfo -v -d rocemu0 || fail "ibv_devinfo -d rocemu0 failed"
	expect "GID\\[ *0\\]:[[:space:]]+::ffff:$HOST_IP, RoCE v2" "rocemu0's GID 0 is ::ffff:$HOST_IP, RoCE v2"
	expect "active_mtu:[[:space:]]+1024 " "rocemu0 runs at IB MTU 1024 on the tap"
	vm 20 "ping -c 3 -W 5 $HOST_IP" || fail "the guest cannot ping $HOST_IP"
	expect "3 packets received" "the guest pings this host"
	capture 20 busybox ping -c 3 -W 5 "$GUEST_IP" || fail "this host cannot ping $GUEST_IP"
	expect "3 packets received" "this host pings the guest"
}

# ---- counters: what each side threw away ----

# The guest's counters as "name value" lines: rxe_rcv's calls (rcv, the
# probe's hits and misses; probe_missed, the misses of both probes: a bad
# ICRC may hide in those), bad ICRCs (icrc_bad, from the return values of
# rxe_icrc_check), packets to a QP rxe no longer has (no_qp, the lines
# hdr_check logs for them: a late resend after the program destroyed its
# QP), rxe0's hw_counters and the UDP and IP errors of its stack.
GUEST_COUNTERS='T=/sys/kernel/tracing
awk '\''$1 == "rxevm_rcv" { print "rcv", $2 + $3 } $1 ~ /^rxevm_/ { m += $3 } END { print "probe_missed", m + 0 }'\'' \
	$T/kprobe_profile
awk '\''$1 == "{" && $2 == "ret:" { n += $6; if ($3 != 0) bad += $6 } END { print "icrc_checked", n + 0; print "icrc_bad", bad + 0 }'\'' \
	$T/events/kprobes/rxevm_icrc/hist
echo "no_qp $(dmesg | grep -c "no qp matches qpn")"
for f in /sys/class/infiniband/rxe0/ports/1/hw_counters/*; do echo "${f##*/} $(cat "$f")"; done
awk '\''$1 == "Udp:" || $1 == "Ip:" { if (!(($1) in h)) { h[$1] = $0; next } split(h[$1], k); for (i = 2; i <= NF; i++) print tolower($1) k[i], $i }'\'' /proc/net/snmp |
	sed "s/^\([a-z]*\):/\1_/"'

# snapshot: GUEST_NOW (rxe's) and ROCEMU_NOW (rocemu's stats) counters as
# "name value" lines; false, and both left as they were, when either side
# does not answer in time.
snapshot() {
	local guest rocemu

	guest=$(run_with_timeout 40 "$RXE_VM" exec -a "$GUEST_IP" -t 20 "$GUEST_COUNTERS" 2>&1)
	rocemu=$(run_with_timeout 10 "$ROCEMU" stats rocemu0 2>&1 | awk '$1 == "rocemu0" { print $2, $3 }')
	grep -q '^icrc_bad [0-9]' <<<"$guest" && grep -q '^rcv [0-9]' <<<"$guest" &&
		grep -q '^rx_icrc_errors [0-9]' <<<"$rocemu" || {
		{ echo "---- counters unavailable"; echo "$guest"; echo "$rocemu"; } >>"$COMMANDS_LOG"
		return 1
	}
	GUEST_NOW=$guest
	ROCEMU_NOW=$rocemu
}

# value LINES NAME: a counter of a snapshot (0 when missing).
value() {
	awk -v n="$2" '$1 == n { v = $2 } END { print v + 0 }' <<<"$1"
}

# wire_deltas: what each side threw away since the last call: sets
# RXE_ICRC_BAD, RXE_DROPPED (packets rxe_rcv got minus those it counted
# received, those with a bad ICRC and those to no QP), ROCEMU_ICRC_BAD,
# ROCEMU_DROPPED (rx_dropped but for bad ICRCs and rx_no_qp): a packet to a
# QP no longer there is a peer's late resend after its partner exited,
# which any NIC drops, see docs/interop.md; and WIRE_WHY, those not 0 in
# words, and probes that missed.
wire_deltas() {
	local g0=$GUEST_NOW r0=$ROCEMU_NOW missed

	RXE_ICRC_BAD=0 RXE_DROPPED=0 ROCEMU_ICRC_BAD=0 ROCEMU_DROPPED=0
	if ! snapshot; then
		WIRE_WHY="the counters did not answer"
		return
	fi
	RXE_ICRC_BAD=$(($(value "$GUEST_NOW" icrc_bad) - $(value "$g0" icrc_bad)))
	RXE_DROPPED=$(($(value "$GUEST_NOW" rcv) - $(value "$g0" rcv) -
		($(value "$GUEST_NOW" rcvd_pkts) - $(value "$g0" rcvd_pkts)) - RXE_ICRC_BAD -
		($(value "$GUEST_NOW" no_qp) - $(value "$g0" no_qp))))
	missed=$(($(value "$GUEST_NOW" probe_missed) - $(value "$g0" probe_missed)))
	ROCEMU_ICRC_BAD=$(($(value "$ROCEMU_NOW" rx_icrc_errors) - $(value "$r0" rx_icrc_errors)))
	ROCEMU_DROPPED=$(($(value "$ROCEMU_NOW" rx_dropped) - $(value "$r0" rx_dropped) - ROCEMU_ICRC_BAD -
		($(value "$ROCEMU_NOW" rx_no_qp) - $(value "$r0" rx_no_qp))))
	WIRE_WHY=
	[ "$RXE_ICRC_BAD" -eq 0 ] || WIRE_WHY+="; rxe: $RXE_ICRC_BAD bad ICRCs"
	[ "$RXE_DROPPED" -eq 0 ] || WIRE_WHY+="; rxe dropped $RXE_DROPPED more"
	[ "$ROCEMU_ICRC_BAD" -eq 0 ] || WIRE_WHY+="; rocemu: $ROCEMU_ICRC_BAD bad ICRCs"
	[ "$ROCEMU_DROPPED" -eq 0 ] || WIRE_WHY+="; rocemu dropped $ROCEMU_DROPPED more"
	[ "$missed" -eq 0 ] || WIRE_WHY+="; rxe's probes missed $missed packets"
	WIRE_WHY=${WIRE_WHY#; }
}

# ---- one case, one way ----

# fill SIDE TEMPLATE: TEMPLATE for a program on SIDE (rxe or rocemu): @DEV
# its device, @GID its GID index, @OWN its address, @SRV the server's
# address, @PORT the pair's TCP port.
fill() {
	local t=$2

	if [ "$1" = rxe ]; then
		t=${t//@DEV/rxe0}
		t=${t//@GID/$RXE_GID}
		t=${t//@OWN/$GUEST_IP}
	else
		t=${t//@DEV/rocemu0}
		t=${t//@GID/0}
		t=${t//@OWN/$HOST_IP}
	fi
	t=${t//@SRV/$SERVER_IP}
	echo "${t//@PORT/$PAIR_PORT}"
}

# start_side SIDE ID SECS CMD OUTPUT: CMD on SIDE in the background (the
# guest's under `tools/rxe-vm exec -i ID`, ours under `rocemu run`); sets SIDE_PID.
start_side() {
	local side=$1 id=$2 secs=$3 cmd=$4 out=$5 words

	echo "+ [$side] $cmd &" >>"$COMMANDS_LOG"
	if [ "$side" = rxe ]; then
		timeout -k 5 $((secs + 30)) "$RXE_VM" exec -a "$GUEST_IP" -t "$secs" -i "$id" \
			"stdbuf -oL $cmd" >"$out" 2>&1 &
	else
		read -ra words <<<"$cmd"
		timeout -k 5 "$secs" "$ROCEMU" run -- stdbuf -oL "${words[@]}" >"$out" 2>&1 &
	fi
	SIDE_PID=$!
	BACKGROUND_PIDS+=("$SIDE_PID")
}

# stop_side SIDE ID PID: end a side still running (a guest command with its whole session).
stop_side() {
	if [ "$1" = rxe ]; then
		run_with_timeout 30 "$RXE_VM" kill -a "$GUEST_IP" -i "$2" >>"$COMMANDS_LOG" 2>&1
		wait_exit "$3" 10 || kill "$3" 2>/dev/null
	else
		kill "$3" 2>/dev/null
	fi
}

# finish_side SIDE ID PID SECS: wait (at most SECS) for a side, stop it
# after that (SIDE_STOPPED 1); SIDE_RC its exit status.
finish_side() {
	SIDE_STOPPED=0
	wait_exit "$3" "$4" || {
		SIDE_STOPPED=1
		stop_side "$1" "$2" "$3"
	}
	wait "$3"
	SIDE_RC=$?
	forget_pid "$3"
}

# guest_wait_script KIND PORT ID: a guest script that waits until the
# server of command ID listens on PORT (KIND tcp: a TCP socket; cm: an RDMA
# CM id); it fails once that command is gone, or after 20 s.
guest_wait_script() {
	cat <<EOF
seen=
for _ in \$(seq 200); do
	case $1 in
	tcp) netstat -ltn | grep -q ":$2 " && exit 0 ;;
	cm) rdma res show cm_id | grep -q "state LISTEN .*src-addr [^ ]*:$2 " && exit 0 ;;
	esac
	if [ -e /run/rxe-vm/$3.pid ]; then seen=1; elif [ -n "\$seen" ]; then echo "the server is gone"; exit 1; fi
	sleep 0.1
done
echo "nothing listens on $2"
exit 1
EOF
}

# side_ready SIDE KIND ID PID: the server on SIDE listens (KIND tcp or cm).
side_ready() {
	if [ "$1" = rxe ]; then
		vm 30 "$(guest_wait_script "$2" "$PAIR_PORT" "$3")"
	elif [ "$2" = cm ]; then
		wait_cm_listening "$PAIR_PORT" "$4"
	else
		wait_listening "$PAIR_PORT" "$4"
	fi
}

# first_error FILE...: the first line of the outputs that reads like an error.
first_error() {
	grep -m 1 -hiE 'fail|error|couldn|unable|invalid|exceeded|timed? ?out|refused|unreachable' "$@" |
		head -n 1 | sed 's/^[[:space:]]*//' | cut -c 1-90
}

# one_way SERVER_SIDE NAME SECS READY CHECK SERVER_TEMPLATE CLIENT_TEMPLATE:
# the server on SERVER_SIDE (rxe or rocemu), the client on the other, under
# SECS each; READY (tcp or cm) says how the server shows it listens, CHECK
# (a function and its words) judges the outputs. One row of the table.
one_way() {
	local server_side=$1 name=$2 secs=$3 ready=$4 check client_side server client
	local server_pid client_pid server_rc client_rc why= result=PASS grace error
	local server_stopped=0 client_stopped=0

	read -ra check <<<"$5"
	client_side=$([ "$server_side" = rxe ] && echo rocemu || echo rxe)
	SERVER_IP=$([ "$server_side" = rxe ] && echo "$GUEST_IP" || echo "$HOST_IP")
	CASE_N=$((CASE_N + 1))
	if [ -n "$FIXED_PORT" ]; then
		PAIR_PORT=$FIXED_PORT
	else
		next_port
	fi
	server=$(fill "$server_side" "$6")
	client=$(fill "$client_side" "$7")
	echo "==== case $CASE_N: $name, $client_side -> $server_side" >>"$COMMANDS_LOG"

	start_side "$server_side" "server$CASE_N" "$secs" "$server" "$SERVER_OUT"
	server_pid=$SIDE_PID
	if side_ready "$server_side" "$ready" "server$CASE_N" "$server_pid"; then
		start_side "$client_side" "client$CASE_N" "$secs" "$client" "$CLIENT_OUT"
		client_pid=$SIDE_PID
		# Past its own limit (the guest's watchdog, or timeout here) only a hung exec is left.
		finish_side "$client_side" "client$CASE_N" "$client_pid" $((secs + 15))
		client_rc=$SIDE_RC
		client_stopped=0
		# A server whose client failed may wait for it forever: a short grace, then stop it.
		grace=$([ "$client_rc" -eq 0 ] && echo "$secs" || echo 3)
		finish_side "$server_side" "server$CASE_N" "$server_pid" "$grace"
		server_rc=$SIDE_RC
		server_stopped=$([ "$client_rc" -ne 0 ] && echo "$SIDE_STOPPED" || echo 0)
	else
		finish_side "$server_side" "server$CASE_N" "$server_pid" 0
		server_rc=$SIDE_RC
		client_rc=-
		: >"$CLIENT_OUT"
		why="the server never listened"
	fi
	log_side "server ($server_side)" "$SERVER_OUT" "$server_rc"
	log_side "client ($client_side)" "$CLIENT_OUT" "$client_rc"
	PAIR_SERVER_RC=$server_rc
	PAIR_CLIENT_RC=$client_rc

	FIGURE=-
	CHECK_WHY=
	wire_deltas
	if [ -n "$why" ]; then
		:
	elif ! side_finished "$server_rc" "$SERVER_OUT" || ! side_finished "$client_rc" "$CLIENT_OUT"; then
		why="server $(exit_words "$server_rc" "$server_stopped"), client $(exit_words "$client_rc" "$client_stopped")"
		error=$(first_error "$CLIENT_OUT" "$SERVER_OUT")
		why+=${error:+: $error}
	elif ! "${check[@]}"; then
		why=$CHECK_WHY
	fi
	[ -z "$WIRE_WHY" ] || why+="${why:+; }$WIRE_WHY"
	if [ -n "$why" ]; then
		result=FAIL
		CASE_FAILS=$((CASE_FAILS + 1))
		diagnose "$name, $client_side -> $server_side" "$server_side" "server$CASE_N"
	fi
	CASE_ROWS+=("$name|$client_side -> $server_side|$result|${why:-$FIGURE}")
	echo "$result: $name, $client_side -> $server_side: ${why:-$FIGURE}"
	kill -0 "$DAEMON_PID" 2>/dev/null || fail "rocemud is gone after $name, $client_side -> $server_side"
}

# exit_words RC STOPPED: how a side ended: its exit status, or stopped by
# the test (STOPPED 1: after its peer failed) or by its time limit.
exit_words() {
	if [ "$2" = 1 ]; then
		echo "stopped after the other failed"
	else
		case $1 in
		124 | 143 | 137) echo "stopped on the time limit" ;;
		*) echo "exit $1" ;;
		esac
	fi
}

LOSSY=		# set in the fault cases: their names say the faults
# diagnose WHAT SERVER_SIDE SERVER_ID: what the guest and rocemu say after a failed case.
diagnose() {
	{
		echo "---- diagnostics of the failed case: $1"
		echo "-- rxe0 (guest) counters now, rcv: rxe_rcv's calls, icrc_bad: rxe_icrc_check's failures"
		echo "$GUEST_NOW"
		echo "-- rocemu0 counters now"
		echo "$ROCEMU_NOW"
	} >>"$COMMANDS_LOG"
	# Each QP's creation logs the virtio link's unknown speed: noise.
	vm 20 'dmesg | grep -v "speed is unknown" | tail -n 20; rdma statistic show link rxe0/1; rdma res show qp' \
		>/dev/null
	run_with_timeout 10 "$ROCEMU" status >>"$COMMANDS_LOG" 2>&1
}

# both_ways NAME SECS READY CHECK SERVER_TEMPLATE CLIENT_TEMPLATE: one_way with the server on rxe, then on rocemu.
both_ways() {
	one_way rxe "$@"
	one_way rocemu "$@"
}

# ---- the checks of the outputs: 0 or 1 with CHECK_WHY; FIGURE, the client's figure ----

# check_pingpong SIZE ITERS: both sides moved every byte, every iteration, no invalid data.
check_pingpong() {
	local bytes=$(($1 * $2 * 2)) f

	for f in "$SERVER_OUT" "$CLIENT_OUT"; do
		grep -Eq "^$bytes bytes in [0-9.]+ seconds = " "$f" && grep -Eq "^$2 iters in [0-9.]+ seconds = " "$f" || {
			CHECK_WHY="$(basename "$f" .out): not all $2 iterations of $bytes bytes reported"
			return 1
		}
	done
	if grep -qE "invalid data|Failed|Couldn't" "$SERVER_OUT" "$CLIENT_OUT"; then
		CHECK_WHY="$(first_error "$SERVER_OUT" "$CLIENT_OUT")"
		return 1
	fi
	FIGURE=$(sed -nE 's/^[0-9]+ bytes in .* = (.*)$/\1/p' "$CLIENT_OUT"),
	FIGURE+=" $(sed -nE 's/^[0-9]+ iters in .* = (.*)$/\1/p' "$CLIENT_OUT")"
}

# check_perftest SIZE ITERS bw|lat: the client's report line; its figure (BW average, or t_avg in cycles).
check_perftest() {
	local line

	line=$(grep -E "^ *$1 +$2 +[0-9]+\.[0-9]+" "$CLIENT_OUT" | head -n 1)
	[ -n "$line" ] || { CHECK_WHY="no report line of $2 x $1 bytes"; return 1; }
	grep -Eq "^-{40,}$" "$SERVER_OUT" || { CHECK_WHY="the server's report is not closed"; return 1; }
	if [ "$3" = bw ]; then
		FIGURE="$(awk '{ print $4 }' <<<"$line") MB/s"
	else
		FIGURE="t_avg $(awk '{ print $6 }' <<<"$line") cycles"
	fi
}

# check_rping COUNT: the client shows COUNT verified pings.
check_rping() {
	local n

	n=$(grep -c '^ping data: rdma-ping-' "$CLIENT_OUT")
	[ "$n" -eq "$1" ] || { CHECK_WHY="the client shows $n of $1 pings"; return 1; }
	if grep -qiE "invalid|mismatch|error" "$SERVER_OUT" "$CLIENT_OUT"; then
		CHECK_WHY="$(first_error "$SERVER_OUT" "$CLIENT_OUT")"
		return 1
	fi
	FIGURE="$n pings verified"
}

# check_status0: both sides end "return status 0" (ucmatose, udaddy).
check_status0() {
	grep -q "^return status 0" "$SERVER_OUT" && grep -q "^return status 0" "$CLIENT_OUT" ||
		{ CHECK_WHY="not both sides report status 0"; return 1; }
	FIGURE="status 0 both"
}

# ---- the cases ----

case_rc_pingpong() {
	local size iters

	for size in 1:100 4096:100 65536:20; do
		iters=${size#*:}
		size=${size%:*}
		both_ways "ibv_rc_pingpong -s $size -n $iters" "$CASE_SECS" tcp "check_pingpong $size $iters" \
			"ibv_rc_pingpong -d @DEV -g @GID -c -p @PORT -s $size -n $iters" \
			"ibv_rc_pingpong -d @DEV -g @GID -c -p @PORT -s $size -n $iters @SRV"
	done
}

case_ud_pingpong() {
	both_ways "ibv_ud_pingpong -s 1024 -n 100" "$CASE_SECS" tcp "check_pingpong 1024 100" \
		"ibv_ud_pingpong -d @DEV -g @GID -c -p @PORT -s 1024 -n 100" \
		"ibv_ud_pingpong -d @DEV -g @GID -c -p @PORT -s 1024 -n 100 @SRV"
}

case_uc_pingpong() {
	both_ways "ibv_uc_pingpong -s 4096 -n 100" "$CASE_SECS" tcp "check_pingpong 4096 100" \
		"ibv_uc_pingpong -d @DEV -g @GID -c -p @PORT -s 4096 -n 100" \
		"ibv_uc_pingpong -d @DEV -g @GID -c -p @PORT -s 4096 -n 100 @SRV"
}

case_srq_pingpong() {
	both_ways "ibv_srq_pingpong -q 4 -s 4096 -n 50" "$CASE_SECS" tcp "check_pingpong 4096 50" \
		"ibv_srq_pingpong -d @DEV -g @GID -c -p @PORT -q 4 -s 4096 -n 50" \
		"ibv_srq_pingpong -d @DEV -g @GID -c -p @PORT -q 4 -s 4096 -n 50 @SRV"
}

# perftest_case TOOL SIZE ITERS bw|lat|faults [OPTION...]: with an ACK
# timeout of 0.5 s (-u 17; perftest's default is 67 ms, ibv_rc_pingpong's
# too): the guest under TCG stalls now and then for longer than 7 of those.
perftest_case() {
	local tool=$1 size=$2 iters=$3 kind=$4 opts check

	shift 4
	opts="-n $iters -u 17${*:+ $*}"
	[ "$tool" = ib_atomic_bw ] || opts="-s $size $opts"
	check="check_perftest $size $iters $kind"
	[ "$kind" != faults ] || check="check_faults $size $iters"
	perftest_clock "$tool"
	both_ways "$tool $opts${LOSSY:+, $FAULTS}" "$CASE_SECS" tcp "$check" \
		"$tool -d @DEV -x @GID ${PERFTEST_CLOCK[*]} -p @PORT $opts" \
		"$tool -d @DEV -x @GID ${PERFTEST_CLOCK[*]} -p @PORT $opts @SRV"
}

case_write_bw() { perftest_case ib_write_bw 65536 100 bw; }
case_read_bw() { perftest_case ib_read_bw 65536 100 bw -o 16; }
case_send_bw() { perftest_case ib_send_bw 4096 200 bw; }
case_atomic_bw() { perftest_case ib_atomic_bw 8 200 bw -o 16 -A FETCH_AND_ADD; }
case_send_lat() { perftest_case ib_send_lat 64 200 lat; }

case_rping() {
	both_ways "rping -C 10 -V" "$CASE_SECS" cm "check_rping 10" \
		"rping -s -a @OWN -p @PORT -C 10 -V" "rping -c -a @SRV -p @PORT -C 10 -v -V"
}

case_ucmatose() {
	both_ways "ucmatose -c 2 -C 10" "$CASE_SECS" cm check_status0 \
		"ucmatose -b @OWN -p @PORT -c 2 -C 10" "ucmatose -s @SRV -b @OWN -p @PORT -c 2 -C 10"
}

# udaddy has no port option: its own, 7174.
case_udaddy() {
	FIXED_PORT=7174
	both_ways "udaddy -c 1 -C 10" "$CASE_SECS" cm check_status0 \
		"udaddy -b @OWN -c 1 -C 10" "udaddy -s @SRV -b @OWN -c 1 -C 10"
	FIXED_PORT=
}

# case_faults: 5 % of rocemu's packets dropped (FAULTS); rxe must recover
# as responder (a gap in rocemu's SENDs or READ requests: a sequence NAK or
# rocemu's resend) and as requester (rocemu's ACKs and READ responses lost:
# rxe resends or asks again from the gap). perftest, not ibv_rc_pingpong:
# rxe takes retry_cnt 7 (ibv_rc_pingpong's) as "retry forever", so a
# pingpong whose last ACK is lost after the rocemu side destroyed its QP
# would retry until killed; perftest only closes its QPs once every
# completion is in (a TCP handshake). Messages of 4 KiB, 16 in flight:
# each loss makes the sender go back N packets, and with 64 KiB messages
# 128 deep a go-back-N of thousands of packets at 5 % loss swamps the
# guest until the sender's retries run out.
case_faults() {
	capture 10 "$ROCEMU" fault rocemu0 "$FAULTS" || fail "rocemu fault rocemu0 $FAULTS"
	LOSSY=1
	perftest_case ib_send_bw 4096 200 faults -t 16
	perftest_case ib_read_bw 4096 200 faults -o 16
	LOSSY=
	capture 10 "$ROCEMU" fault rocemu0 off || fail "rocemu fault rocemu0 off"
}

# check_faults: check_perftest's, and rocemu dropped some of its packets in the case.
check_faults() {
	local dropped

	check_perftest "$1" "$2" bw || return 1
	dropped=$(($(value "$ROCEMU_NOW" fault_dropped) - FAULT_DROPPED_BEFORE))
	FAULT_DROPPED_BEFORE=$(value "$ROCEMU_NOW" fault_dropped)
	[ "$dropped" -gt 0 ] || { CHECK_WHY="rocemu dropped nothing"; return 1; }
	FIGURE+=" with $dropped of rocemu's packets dropped"
}

# ---- the run ----

# print_table: the cases' rows, aligned; kept as table-BACKEND.txt.
print_table() {
	local row

	{
		echo "== $TEST_NAME ($BACKEND): $((${#CASE_ROWS[@]} - CASE_FAILS)) of ${#CASE_ROWS[@]} passed;" \
			"guest boot $BOOT_SECS s, run $((SECONDS - RUN_STARTED)) s"
		printf '%-52s %-16s %-6s %s\n' case "client -> server" result "figure, or why it failed"
		for row in "${CASE_ROWS[@]}"; do
			IFS='|' read -r c d r f <<<"$row"
			printf '%-52s %-16s %-6s %s\n' "$c" "$d" "$r" "$f"
		done
		echo "rdma statistic of the guest after the cases before the faults:"
		echo "$RDMA_STATISTIC"
	} | tee "$WORK_DIR/table-$BACKEND.txt"
	cat "$WORK_DIR/table-$BACKEND.txt" >>"$COMMANDS_LOG"
}

# wanted CASE: this backend runs CASE (epoll: EPOLL_CASES).
wanted() {
	[ "$BACKEND" != epoll ] || [[ " $EPOLL_CASES " == *" $1 "* ]]
}

# total_check: over every case before the faults, rxe and rocemu found no
# bad ICRC and threw nothing else away (see wire_deltas); rdma statistic as
# the guest shows it goes with the table.
total_check() {
	local g=$GUEST_NOW r=$ROCEMU_NOW result=PASS name rxe_bad rxe_dropped rocemu_bad rocemu_dropped

	vm 20 'rdma statistic show link rxe0/1' || fail "rdma statistic in the guest failed"
	RDMA_STATISTIC=$(cat "$OUT")
	rxe_bad=$(value "$g" icrc_bad)
	rxe_dropped=$(($(value "$g" rcv) - $(value "$g" rcvd_pkts) - rxe_bad - $(value "$g" no_qp)))
	rocemu_bad=$(value "$r" rx_icrc_errors)
	rocemu_dropped=$(($(value "$r" rx_dropped) - rocemu_bad - $(value "$r" rx_no_qp)))
	[ $((rxe_bad + rxe_dropped + rocemu_bad + rocemu_dropped + $(value "$g" probe_missed))) -eq 0 ] || {
		result=FAIL
		CASE_FAILS=$((CASE_FAILS + 1))
	}
	CASE_ROWS+=("counters after the cases above|-|$result|rxe: $rxe_bad bad ICRCs in \
$(value "$g" rcv) packets, $rxe_dropped dropped more ($(value "$g" no_qp) to no QP), \
$(value "$g" probe_missed) missed by the \
probes; rocemu: $rocemu_bad bad ICRCs in $(value "$r" port_rcv_packets), $rocemu_dropped \
dropped more ($(value "$r" rx_no_qp) to no QP)")
	for name in udp_inerrors udp_incsumerrors udp_rcvbuferrors ip_inhdrerrors ip_indiscards; do
		[ "$(value "$g" "$name")" -eq 0 ] || echo "note: the guest's $name is $(value "$g" "$name")"
	done
}

# compare_captures: the RoCEv2 frames of the kernel's capture of the tap
# (TAP_PCAP: every frame as it crossed the tap, both ways, whole) are each a
# valid RoCEv2 packet whose ICRC holds over the IPv4 header it carried:
# rocemu's, with the IDs the kernel gave its GSO segments, and rxe's, with
# its own IDs and UDP checksum 0. rocemu's own capture (ROCEMU_PCAP_FILE)
# is compared byte for byte with a kernel capture in wire_capture.sh; here
# the MACs differ and the fault cases drop packets it captured.
compare_captures() {
	local roce=$WORK_DIR/tap-roce-$BACKEND.pcap

	[ -s "$TAP_PCAP" ] || fail "no capture of the tap in $TAP_PCAP"
	capture 60 tcpdump -r "$TAP_PCAP" -w "$roce" "udp dst port 4791" ||
		fail "tcpdump cannot read $TAP_PCAP"
	capture 60 "$top_builddir/tests/e2e/wire/pcap_check" "$roce" ||
		fail "a RoCEv2 frame on the tap is not valid (see pcap_check's line above)"
	ok "every RoCEv2 frame on the tap, rocemu's and rxe's, has a valid ICRC: $(tail -n 1 "$OUT" | cut -d';' -f1)"
	: "$ROCEMU_PCAP_FILE"
}

# save_artifacts: the captures, console, table and log of this backend into ARTIFACTS/BACKEND.
save_artifacts() {
	local dest=$ARTIFACTS/${BACKEND:-none} f

	[ -n "$BACKEND" ] || return 0
	rm -rf "$dest" && mkdir -p "$dest" || return 0
	for f in "$WORK_DIR/tap-$BACKEND.pcap" "$WORK_DIR/console-$BACKEND.log" \
		"$WORK_DIR/table-$BACKEND.txt" "$COMMANDS_LOG" "$ROCEMU_RUNTIME_DIR/rocemud.log"; do
		[ -f "$f" ] && cp "$f" "$dest/"
	done
	[ -d "$WORK_DIR/pcap-$BACKEND" ] && cp -r "$WORK_DIR/pcap-$BACKEND" "$dest/rocemu-pcap"
	echo "artifacts: $dest"
}

del_taps() {
	local tap

	for tap in "${TAPS[@]}"; do
		ip link del "$tap" 2>/dev/null
	done
}

# lock_guest: one guest of this test at a time on the machine (make -j runs
# both backends at once; two guests under TCG on two cores stall each other
# past the programs' ACK timeouts). Held until the backend's processes end.
lock_guest() {
	local lock

	lock=$(dirname "$IMAGE")/run.lock
	exec {GUEST_LOCK}>>"$lock" || fail "cannot open $lock"
	flock -w 3600 "$GUEST_LOCK" || fail "another guest of this test holds $lock for an hour"
}

rxe_interop() {
	local c

	HOST_IP=198.18.$((200 + BACKEND_INDEX)).1
	GUEST_IP=198.18.$((200 + BACKEND_INDEX)).2
	TAP=rxetap$BACKEND_INDEX
	TAP_PCAP=$WORK_DIR/tap-$BACKEND.pcap
	ROCEMU_PCAP_FILE=$WORK_DIR/pcap-$BACKEND/rocemu0.pcap
	CASE_ROWS=()
	CASE_FAILS=0
	FAULT_DROPPED_BEFORE=0
	RDMA_STATISTIC=-
	lock_guest
	RUN_STARTED=$SECONDS
	start_guest
	export ROCEMU_DEVICES=rocemu0=$HOST_IP
	DAEMON_LIMIT=$VM_LIMIT ROCEMU_LOG=info ROCEMU_PCAP=$WORK_DIR/pcap-$BACKEND ROCEMU_PCAP_SNAPLEN=0 \
		start_daemon
	guest_facts
	snapshot || fail "the counters of rxe0 or rocemu0 cannot be read"
	for c in rc_pingpong ud_pingpong uc_pingpong srq_pingpong write_bw read_bw send_bw atomic_bw \
		send_lat rping ucmatose udaddy; do
		! wanted "$c" || "case_$c"
	done
	total_check
	! wanted faults || case_faults
	stop_guest
	stop_daemon "$ROCEMU_RUNTIME_DIR"
	compare_captures
	print_table
	save_artifacts
	exec {GUEST_LOCK}>&-
	[ "$CASE_FAILS" -eq 0 ] || fail "$CASE_FAILS of ${#CASE_ROWS[@]} cases failed (table above)"
	ok "all ${#CASE_ROWS[@]} cases passed"
}

guest_image
trap 'save_artifacts; cleanup; del_taps' EXIT
for_each_backend rxe_interop
