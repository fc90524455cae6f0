#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Capture files are the daemon's user's alone: made with mode 0600 (they
# hold rkeys, addresses and PSNs), never written through a symbolic link,
# an existing file replaced only in a directory no other user may write.
# A directory another user owns, with a link in it to a file only this
# user may write, leaves that file as it was, whether the capture is
# asked for by ROCEMU_PCAP or by `rocemu capture`. A capture that fills
# its disk stops saying "No space left on device".
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_pair.sh"
require_programs ibv_rc_pingpong setpriv mount umount
use_test_net 36
[ "$(id -u)" -eq 0 ] || skip "needs root: another user's directory and a small tmpfs"
id nobody >/dev/null 2>&1 || skip "no user nobody"

# unchanged FILE TEXT: FILE still holds just TEXT.
unchanged() {
	[ "$(cat "$1")" = "$2" ] || fail "$1 was changed: $(head -c 64 "$1" | od -c | head -2)"
	ok "$(basename "$1") is untouched"
}

capture_files() {
	local shared=$WORK_DIR/shared-$BACKEND secret=$WORK_DIR/secret-$BACKEND
	local full=$WORK_DIR/full-$BACKEND mode

	# A directory of nobody's that anyone may write, as a shared scratch directory is.
	chmod 0711 "$WORK_DIR" || fail "chmod $WORK_DIR"
	mkdir -m 0777 "$shared" && chown nobody "$shared" || fail "mkdir $shared"
	echo "only root writes this" >"$secret" && chmod 0600 "$secret" || fail "write $secret"
	setpriv --reuid=nobody --regid=nogroup --clear-groups ln -s "$secret" "$shared/rocemu0.pcap" ||
		fail "nobody cannot make a link in $shared"
	setpriv --reuid=nobody --regid=nogroup --clear-groups sh -c "echo theirs >'$shared/theirs.pcap'" ||
		fail "nobody cannot write $shared/theirs.pcap"

	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	if capture 10 env ROCEMU_PCAP="$shared" "$ROCEMUD"; then
		fail "rocemud started with ROCEMU_PCAP=$shared holding a link named rocemu0.pcap"
	fi
	expect "ROCEMU_PCAP: .*rocemu0.pcap: File exists" "ROCEMU_PCAP through a link: the daemon refuses to start"
	unchanged "$secret" "only root writes this"

	start_daemon
	cli_refused "a capture through a link" "cannot write .*rocemu0.pcap: File exists" \
		capture rocemu0 -w "$shared/rocemu0.pcap"
	unchanged "$secret" "only root writes this"
	cli_refused "another user's file" "cannot write .*theirs.pcap: File exists" \
		capture rocemu0 -w "$shared/theirs.pcap"
	unchanged "$shared/theirs.pcap" "theirs"
	ln -s "$secret" "$WORK_DIR/link-$BACKEND.pcap" || fail "ln -s"
	cli_refused "a link in a directory of this user's" \
		"cannot write .*link-$BACKEND.pcap: Too many levels of symbolic links" \
		capture rocemu0 -w "$WORK_DIR/link-$BACKEND.pcap"
	unchanged "$secret" "only root writes this"

	run_with_timeout 10 "$ROCEMU" capture rocemu0 -w "$shared/mine.pcap" ||
		fail "a new file in $shared refused"
	pingpong_4k 5
	run_with_timeout 10 "$ROCEMU" capture rocemu0 stop || fail "rocemu capture rocemu0 stop failed"
	mode=$(stat -c %a "$shared/mine.pcap")
	[ "$mode" = 600 ] || fail "$shared/mine.pcap has mode $mode, not 600"
	ok "a new capture file has mode 0600"
	check_capture "$shared/mine.pcap"

	# In the test's own directory (mode 0700) a second capture replaces the first.
	run_with_timeout 10 "$ROCEMU" capture rocemu0 -w "$WORK_DIR/again.pcap" &&
		run_with_timeout 10 "$ROCEMU" capture rocemu0 stop || fail "a capture to again.pcap failed"
	run_with_timeout 10 "$ROCEMU" capture rocemu0 -w "$WORK_DIR/again.pcap" ||
		fail "a capture replacing again.pcap in a directory of this user's refused"
	run_with_timeout 10 "$ROCEMU" capture rocemu0 stop || fail "rocemu capture rocemu0 stop failed"
	ok "an existing file in a directory of this user's is replaced"

	mkdir "$full" && mount -t tmpfs -o size=64k,mode=0700 tmpfs "$full" || fail "cannot mount a tmpfs on $full"
	echo "+ mount -t tmpfs -o size=64k tmpfs $full" >>"$COMMANDS_LOG"
	run_with_timeout 10 "$ROCEMU" capture rocemu0 -w "$full/full.pcap" ||
		{ umount "$full"; fail "a capture to $full/full.pcap refused"; }
	pingpong_4k 100
	# The daemon learns of the writer's failure at its next write of records: traffic until it does.
	for _ in $(seq 20); do
		grep -q "rocemu0: capture stopped" "$ROCEMU_RUNTIME_DIR/rocemud.log" && break
		pingpong_4k 2
	done
	umount -l "$full" || fail "umount $full"
	grep -q "rocemu0: capture stopped: No space left on device" "$ROCEMU_RUNTIME_DIR/rocemud.log" ||
		fail "the daemon's log does not say the capture stopped for a full disk: $(grep 'capture stopped' "$ROCEMU_RUNTIME_DIR/rocemud.log")"
	ok "a full disk stops the capture with 'No space left on device'"
	capture 10 "$ROCEMU" status
	expect_none "capture $full" "status names no capture after the disk filled"
}

for_each_backend capture_files
