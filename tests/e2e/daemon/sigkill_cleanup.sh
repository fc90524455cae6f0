#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# A client killed with SIGKILL leaves nothing behind: the daemon destroys
# its QP, CQ, MR and PD when the control connection closes.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
require_built "$VERBS_CONTROL"
use_test_net 3

# client_block PID: the lines of that client's block in the status text on stdin.
client_block() {
	awk -v pid="$1" '
		/^client pid / { inblock = ($3 == pid); if (inblock) print; next }
		/^  / { if (inblock) print; next }
		{ inblock = 0 }'
}

sigkill_cleanup() {
	local ip pidfile client_out run_pid client_pid ready_qpn status_qpn

	ip=$(addr 1)
	export ROCEMU_DEVICES="rocemu0=$ip"
	start_daemon
	capture 10 "$ROCEMU" status || fail "rocemu status failed"
	expect "^rocemud pid [0-9]+ backend $ROCEMU_NET delivery local poll sleep wire private runtime $ROCEMU_RUNTIME_DIR$" "daemon runs the $ROCEMU_NET backend"
	expect "^device rocemu0 $ip mac 02:00(:[0-9a-f]{2}){4} port ACTIVE mtu 4096$" "device line, the MAC derived from the address"

	pidfile=$WORK_DIR/client.pid
	client_out=$WORK_DIR/client.out
	rm -f "$pidfile"
	echo "+ rocemu run -- verbs_control --hold rocemu0 &" >>"$COMMANDS_LOG"
	# The shell records its pid and becomes the client, so we kill the client itself.
	# shellcheck disable=SC2016
	run_with_timeout 120 "$ROCEMU" run -- sh -c 'echo $$ >"$1"; exec "$2" --hold rocemu0' \
		sh "$pidfile" "$VERBS_CONTROL" >"$client_out" 2>&1 &
	run_pid=$!
	BACKGROUND_PIDS+=("$run_pid")
	wait_ready "$client_out" "$run_pid" 10
	cat "$client_out" >>"$COMMANDS_LOG"
	grep -q '^ready' "$client_out" || fail "the client did not get ready"
	ready_qpn=$(awk '/^ready/ { print $3 }' "$client_out")
	client_pid=$(cat "$pidfile")

	capture 10 "$ROCEMU" status || fail "rocemu status failed"
	client_block "$client_pid" <"$OUT" >"$WORK_DIR/block"
	cp "$WORK_DIR/block" "$OUT"
	expect "^client pid $client_pid comm [^ ]+ device rocemu0$" "client $client_pid listed"
	expect "^  pd [0-9]+$" "its PD listed"
	expect "^  mr [0-9]+ pd [0-9]+ lkey 0x[0-9a-f]+ len 4096$" "its MR listed"
	expect "^  cq 0x[0-9a-f]+ cqe [0-9]+$" "its CQ listed"
	expect "^  qp 0x[0-9a-f]+ RC INIT pd [0-9]+$" "its QP listed in INIT"
	status_qpn=$(awk '$1 == "qp" { print $2 }' "$OUT")
	[ "$((status_qpn))" -eq "$((ready_qpn))" ] || fail "status shows qp $status_qpn, the client has $ready_qpn"

	kill -9 "$client_pid" || fail "kill -9 $client_pid"
	wait "$run_pid" 2>/dev/null
	for _ in $(seq 100); do
		capture 10 "$ROCEMU" status || fail "rocemu status failed after the kill"
		client_block "$client_pid" <"$OUT" | grep -q . || break
		sleep 0.1
	done
	expect_none "^client pid $client_pid " "client $client_pid and its objects gone after SIGKILL"
	expect "^device rocemu0 $ip mac [0-9a-f:]+ port ACTIVE" "daemon still serves rocemu0"
}

for_each_backend sigkill_cleanup
