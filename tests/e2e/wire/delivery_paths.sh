#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Faster delivery is not different delivery: one ibv_rc_pingpong -c between
# two devices of one daemon, once with ROCEMU_DELIVERY=udp (through the
# kernel's UDP stack) and once with the default in-daemon delivery, leaves
# captures that are the same frame for frame (headers, PSNs, payload,
# ICRCs; only the times differ). Both runs draw the same PSNs
# (fixed_seed.so), so nothing but the delivery path changes.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_pair.sh"
SEED_LIB=$top_builddir/tests/e2e/wire/.libs/fixed_seed.so
require_built "$SEED_LIB"
require_programs ibv_rc_pingpong python3
use_test_net 33

# ibv_rc_pingpong with the seed library after what `rocemu run` preloads (the shim, and
# in a sanitized build the ASan runtime, which must come first).
SEEDED=(sh -c 'LD_PRELOAD=$LD_PRELOAD:$0 exec ibv_rc_pingpong "$@"' "$SEED_LIB")

# frames FILE: one line per record, its length on the wire and its bytes in hex.
frames() {
	python3 - "$1" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
off = 24
while off + 16 <= len(data):
    _, _, incl, orig = struct.unpack_from("<IIII", data, off)
    print(orig, data[off + 16:off + 16 + incl].hex())
    off += 16 + incl
PY
}

# pingpong_capture MODE: ROCEMU_DELIVERY=MODE, 20 checked round trips, captures in $WORK_DIR/MODE-$BACKEND.
pingpong_capture() {
	local mode=$1 pcap=$WORK_DIR/$1-$BACKEND

	ROCEMU_DELIVERY=$mode ROCEMU_PCAP=$pcap ROCEMU_PCAP_SNAPLEN=0 start_daemon
	capture 10 "$ROCEMU" status || fail "rocemu status: $(cat "$OUT")"
	expect "^rocemud pid [0-9]+ backend $ROCEMU_NET delivery $mode poll sleep " "the daemon delivers by $mode"
	next_port
	run_pair "ibv_rc_pingpong -c, $mode delivery" 60 \
		"${SEEDED[@]}" -d rocemu0 -g 0 -p "$PAIR_PORT" -n 20 -s 3000 -m 1024 -c \
		--client "${SEEDED[@]}" -d rocemu1 -g 0 -p "$PAIR_PORT" -n 20 -s 3000 -m 1024 -c \
		"$(addr 1)"
	stop_daemon "$ROCEMU_RUNTIME_DIR"
}

delivery_paths() {
	local dev n

	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	pingpong_capture udp
	pingpong_capture local
	for dev in rocemu0 rocemu1; do
		frames "$WORK_DIR/udp-$BACKEND/$dev.pcap" >"$WORK_DIR/udp-$dev.frames" ||
			fail "cannot read the udp capture of $dev"
		frames "$WORK_DIR/local-$BACKEND/$dev.pcap" >"$WORK_DIR/local-$dev.frames" ||
			fail "cannot read the local capture of $dev"
		n=$(wc -l <"$WORK_DIR/udp-$dev.frames")
		# 20 round trips of 3 packets each way, plus ACKs: both devices see all of them.
		[ "$n" -ge 120 ] || fail "$dev: the udp capture holds $n frames, expected at least 120"
		cmp -s "$WORK_DIR/udp-$dev.frames" "$WORK_DIR/local-$dev.frames" ||
			fail "$dev: the captures differ: $(diff "$WORK_DIR/udp-$dev.frames" "$WORK_DIR/local-$dev.frames" | head -n 4)"
		ok "$dev: $n frames, the same bytes through the kernel and inside the daemon"
	done
}

for_each_backend delivery_paths
