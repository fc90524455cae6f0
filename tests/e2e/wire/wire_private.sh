#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Where every device is on loopback, the daemon's UDP sockets live in a
# network namespace of its own (ROCEMU_WIRE, default): nothing is bound on
# the host (ss shows no 4791 on the devices' addresses), a datagram sent
# there from outside reaches no device, and the devices still talk (RC
# and UD pingpong, data checked). The same as another user (a user
# namespace then). ROCEMU_WIRE=host binds as before; private with an
# address off loopback, or a value neither, is refused.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_pair.sh"
require_programs ibv_rc_pingpong ibv_ud_pingpong ss setpriv
use_test_net 38

# dropped DEV: DEV's rx_dropped counter (a datagram that is no RoCE packet counts there).
dropped() {
	run_with_timeout 5 "$ROCEMU" stats | awk -v dev="$1" '$1 == dev && $2 == "rx_dropped" { print $3 }'
}

# bound ADDR: the UDP sockets on the host bound to ADDR, one line each.
bound() {
	ss -Hauln "src $1" 2>/dev/null | grep -c . || true
}

wire_private() {
	local a1 a2 before dir

	unset ROCEMU_WIRE
	a1=$(addr 1) a2=$(addr 2)
	ROCEMU_DEVICES="rocemu0=$a1,rocemu1=$a2"
	export ROCEMU_DEVICES
	start_daemon
	capture 10 "$ROCEMU" status || fail "rocemu status failed"
	expect "^rocemud pid [0-9]+ .* wire private runtime " "status says the wire is private"
	[ "$(bound "$a1")" -eq 0 ] && [ "$(bound "$a2")" -eq 0 ] ||
		fail "sockets bound on the host: $(ss -Hauln "src $a1 or src $a2")"
	ok "nothing bound on the host for $a1 or $a2"

	next_port
	run_pair "ibv_rc_pingpong" 60 \
		ibv_rc_pingpong -d rocemu0 -g 0 -c -p "$PAIR_PORT" -s 4096 -n 50 \
		--client ibv_rc_pingpong -d rocemu1 -g 0 -c -p "$PAIR_PORT" -s 4096 -n 50 127.0.0.1
	expect_both "^50 iters in " "RC pingpong over the private wire, data checked"
	next_port
	run_pair "ibv_ud_pingpong" 60 \
		ibv_ud_pingpong -d rocemu0 -g 0 -c -p "$PAIR_PORT" -s 1024 -n 50 \
		--client ibv_ud_pingpong -d rocemu1 -g 0 -c -p "$PAIR_PORT" -s 1024 -n 50 127.0.0.1
	expect_both "^50 iters in " "UD pingpong over the private wire, data checked"

	# From outside, a device's address and port lead nowhere.
	before=$(dropped rocemu1)
	[ -n "$before" ] || fail "no rx_dropped counter in rocemu stats"
	for _ in $(seq 20); do
		printf 'forged' >/dev/udp/"$a2"/4791 2>/dev/null || true
	done
	sleep 0.2
	[ "$(dropped rocemu1)" = "$before" ] || fail "datagrams from outside reached rocemu1"
	ok "datagrams sent to $a2:4791 from outside reach no device"
	stop_daemon "$ROCEMU_RUNTIME_DIR"

	# Asked for, the devices bind on the host as before.
	ROCEMU_WIRE=host start_daemon
	capture 10 "$ROCEMU" status || fail "rocemu status failed"
	expect "^rocemud pid [0-9]+ .* wire host runtime " "ROCEMU_WIRE=host: status says so"
	[ "$(bound "$a1")" -ge 1 ] || fail "ROCEMU_WIRE=host: nothing bound on $a1"
	ok "ROCEMU_WIRE=host: $a1 bound on the host"
	# The same datagrams now reach the device (and are dropped as no RoCE packet): the check above can fail.
	before=$(dropped rocemu1)
	printf 'forged' >/dev/udp/"$a2"/4791
	for _ in $(seq 50); do
		[ "$(dropped rocemu1)" -gt "$before" ] && break
		sleep 0.1
	done
	[ "$(dropped rocemu1)" -gt "$before" ] || fail "ROCEMU_WIRE=host: a datagram to $a2:4791 is not seen"
	ok "ROCEMU_WIRE=host: a datagram from outside reaches rocemu1 (dropped, not RoCE)"
	stop_daemon "$ROCEMU_RUNTIME_DIR"

	ROCEMU_DEVICES="rocemu0=198.18.38.1" ROCEMU_WIRE=private capture 10 "$ROCEMUD" &&
		fail "ROCEMU_WIRE=private started with an address off loopback"
	expect_fixed "ROCEMU_WIRE=private: a device's address is not on loopback" "private off loopback refused"
	ROCEMU_WIRE=nowhere capture 10 "$ROCEMUD" && fail "ROCEMU_WIRE=nowhere accepted"
	expect_fixed 'ROCEMU_WIRE="nowhere" is neither host nor private' "an unknown ROCEMU_WIRE refused"

	# Another user's daemon: a user namespace makes its network namespace.
	[ "$(id -u)" -eq 0 ] || return 0
	dir=$WORK_DIR/nobody-$BACKEND
	chmod 0711 "$WORK_DIR"
	mkdir -m 0700 "$dir" && chown nobody:nogroup "$dir" || fail "mkdir $dir"
	echo "+ [nobody] rocemud &" >>"$COMMANDS_LOG"
	ROCEMU_RUNTIME_DIR=$dir ROCEMU_DEVICES="rocemu0=$(addr 3)" \
		timeout -k 5 60 setpriv --reuid=nobody --regid=nogroup --clear-groups \
		"$ROCEMUD" >"$WORK_DIR/nobody-$BACKEND.log" 2>&1 &
	BACKGROUND_PIDS+=("$!")
	for _ in $(seq 100); do
		ROCEMU_RUNTIME_DIR=$dir setpriv --reuid=nobody --regid=nogroup --clear-groups \
			"$ROCEMU" status >"$OUT" 2>&1 && break
		sleep 0.1
	done
	cat "$WORK_DIR/nobody-$BACKEND.log" "$OUT" >>"$COMMANDS_LOG"
	expect "^rocemud pid [0-9]+ .* wire private runtime " "nobody's daemon: the wire is private"
	[ "$(bound "$(addr 3)")" -eq 0 ] || fail "nobody's daemon bound $(addr 3) on the host"
	ok "nobody's daemon binds nothing on the host"
	ROCEMU_RUNTIME_DIR=$dir setpriv --reuid=nobody --regid=nogroup --clear-groups \
		timeout 10 "$ROCEMU" stop >/dev/null 2>&1 || true
}

for_each_backend wire_private
