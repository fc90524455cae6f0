#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Another user cannot impersonate the daemon. A second user serves a real
# rocemud (device impostor0) in a runtime directory we are pointed at: the
# CLI refuses to talk to it, saying which directory and what is wrong, and
# the shim lists no emulated device from it, with a log line saying why:
# when the directory is the other user's, when it is ours but open to
# others (mode 0755), and when it is ours with mode 0700 but the socket is
# served by the other user (SO_PEERCRED). rocemud itself creates its
# directory with mode 0700 and refuses one it does not own or others can
# write. Acting as a second user needs root (setpriv); elsewhere a skip.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
require_programs ibv_devices
use_test_net 80

[ "$(id -u)" -eq 0 ] || skip "acting as a second user needs root"
command -v setpriv >/dev/null || skip "setpriv (util-linux) not installed"
OTHER_UID=$(id -u nobody 2>/dev/null || echo 65534)
OTHER_GID=$(id -g nobody 2>/dev/null || echo 65534)

# as_other CMD...: CMD as the second user.
as_other() {
	setpriv --reuid="$OTHER_UID" --regid="$OTHER_GID" --clear-groups "$@"
}

# impostor_start DIR: the second user's rocemud serving DIR, answering (bounded).
# Sets IMPOSTOR_PID (the timeout running it: our `rocemu stop` would not be
# heard) and IMPOSTOR_DAEMON_PID (the daemon).
impostor_start() {
	local dir=$1

	mkdir -m 0700 "$dir" && chown "$OTHER_UID:$OTHER_GID" "$dir" || fail "mkdir $dir"
	as_other test -x "$ROCEMUD" -a -w "$dir" ||
		skip "uid $OTHER_UID cannot reach $ROCEMUD or $dir"
	echo "+ [uid $OTHER_UID] ROCEMU_RUNTIME_DIR=$dir ROCEMU_DEVICES=impostor0=$(addr 1) rocemud &" >>"$COMMANDS_LOG"
	ROCEMU_RUNTIME_DIR=$dir ROCEMU_DEVICES="impostor0=$(addr 1)" \
		timeout -k 5 120 setpriv --reuid="$OTHER_UID" --regid="$OTHER_GID" --clear-groups \
		"$ROCEMUD" >"$WORK_DIR/impostor-$BACKEND.log" 2>&1 &
	IMPOSTOR_PID=$!
	BACKGROUND_PIDS+=("$IMPOSTOR_PID")
	for _ in $(seq 100); do
		IMPOSTOR_DAEMON_PID=$(ROCEMU_RUNTIME_DIR=$dir as_other "$ROCEMU" status 2>/dev/null |
			awk '$1 == "rocemud" && $2 == "pid" { print $3 }')
		[ -z "$IMPOSTOR_DAEMON_PID" ] || return 0
		sleep 0.1
	done
	cat "$WORK_DIR/impostor-$BACKEND.log" >>"$COMMANDS_LOG"
	fail "the second user's rocemud does not answer"
}

# refused DIR WHY: neither the CLI nor the shim talks to the daemon of DIR; both say WHY (a prefix).
refused() {
	local dir=$1 why=$2

	ROCEMU_RUNTIME_DIR=$dir capture 10 "$ROCEMU" status && fail "rocemu status answered from $dir ($why)"
	expect_fixed "rocemu: runtime directory $dir: $why" "rocemu status refuses $dir: $why"
	expect_none "impostor0" "rocemu status shows nothing of the impostor"

	# The shim in an unmodified program (rocemu run's own daemon is ours, in our own dir).
	capture 30 "$ROCEMU" run -- env ROCEMU_RUNTIME_DIR="$dir" ROCEMU_ONLY=1 ibv_devices
	expect_none "impostor0" "ibv_devices lists no device from $dir"
	expect_fixed "error: runtime directory $dir: $why" "the shim logs why: $why"
}

impostor_daemon() {
	local dir=$WORK_DIR/impostor-$BACKEND mine=$WORK_DIR/mine-$BACKEND

	export ROCEMU_DEVICES="rocemu0=$(addr 2)"
	chmod 0711 "$WORK_DIR"	# the second user reaches its directory inside
	impostor_start "$dir"

	refused "$dir" "is owned by uid $OTHER_UID, not by uid 0 (you)"

	chown 0:0 "$dir" && chmod 0755 "$dir" || fail "chown/chmod $dir"
	refused "$dir" "has mode 0755, not 0700"

	chmod 0700 "$dir" || fail "chmod $dir"
	refused "$dir" "is served by pid $IMPOSTOR_DAEMON_PID of uid $OTHER_UID, neither you (uid 0) nor root"

	# Our own daemon in our own directory is trusted, by the CLI and the shim.
	start_daemon
	capture 10 "$ROCEMU" status || fail "rocemu status of our own daemon"
	expect "^device rocemu0 " "our own daemon answers rocemu status"
	capture 30 "$ROCEMU" run -- ibv_devices || fail "ibv_devices with our own daemon"
	expect "^[[:space:]]+rocemu0[[:space:]]" "ibv_devices lists our own rocemu0"

	# rocemud: a directory of its own, mode 0700 whatever the umask; no other.
	ROCEMU_RUNTIME_DIR=$dir capture 10 "$ROCEMUD" && fail "rocemud started in $dir"
	expect_fixed "rocemud: runtime directory $dir: is served by pid $IMPOSTOR_DAEMON_PID of uid $OTHER_UID" \
		"rocemud refuses a socket another user serves"
	mkdir -m 0755 "$mine" || fail "mkdir $mine"
	ROCEMU_RUNTIME_DIR=$mine capture 10 "$ROCEMUD" && fail "rocemud started in $mine (mode 0755)"
	expect_fixed "rocemud: runtime directory $mine: has mode 0755, not 0700" "rocemud refuses a directory others can write"
	chown "$OTHER_UID" "$mine" && chmod 0700 "$mine" || fail "chown/chmod $mine"
	ROCEMU_RUNTIME_DIR=$mine capture 10 "$ROCEMUD" && fail "rocemud started in $mine (another user's)"
	expect_fixed "rocemud: runtime directory $mine: is owned by uid $OTHER_UID" "rocemud refuses another user's directory"
	rm -rf "$mine"
	(umask 0 && ROCEMU_RUNTIME_DIR=$mine ROCEMU_DEVICES="rocemu0=$(addr 3)" capture 10 "$ROCEMUD" --idle-exit 1) ||
		fail "rocemud in a new directory"
	[ "$(stat -c %a "$mine")" = 700 ] || fail "rocemud made $mine with mode $(stat -c %a "$mine")"
	ok "rocemud makes its directory with mode 0700 (umask 0)"

	kill "$IMPOSTOR_PID" && wait "$IMPOSTOR_PID"
	forget_pid "$IMPOSTOR_PID"
}

for_each_backend impostor_daemon
