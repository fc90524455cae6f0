#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# `rocemu stats --json` for scripts: after an ibv_rc_pingpong between two
# devices, the JSON parses, names every counter of the text report, and
# each device's port_xmit/rcv packets and data words match the frames its
# capture holds; `rocemu stats DEV` shows DEV alone, an unknown DEV fails.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_pair.sh"
require_programs ibv_rc_pingpong python3 ss
use_test_net 71

# python3 -c "$COUNT_MATCHES" JSON PCAP ADDR DEV: DEV's counters in JSON against the frames
# from and to ADDR in PCAP.
COUNT_MATCHES=$(cat <<'PY'
import json, socket, struct, sys

report, pcap, addr, dev = sys.argv[1:5]
counters = json.load(open(report))[dev]
me = socket.inet_aton(addr)
sent = received = sent_bytes = received_bytes = 0
with open(pcap, "rb") as f:
    f.read(24)
    while len(head := f.read(16)) == 16:
        caplen = struct.unpack("<IIII", head)[2]
        frame = f.read(caplen)
        ip = frame[14:34]
        udp_payload = struct.unpack("!H", frame[38:40])[0] - 8
        if ip[12:16] == me:
            sent += 1
            sent_bytes += udp_payload
        if ip[16:20] == me:
            received += 1
            received_bytes += udp_payload
want = {"port_xmit_packets": sent, "port_rcv_packets": received,
        "port_xmit_data": sent_bytes // 4, "port_rcv_data": received_bytes // 4}
bad = {k: (counters[k], v) for k, v in want.items() if counters[k] != v}
print(f"{dev}: {sent} frames sent, {received} received; counters {dict((k, counters[k]) for k in want)}")
sys.exit(1 if bad or sent == 0 or received == 0 else 0)
PY
)

stats_json() {
	local pcap=$WORK_DIR/pcap-$BACKEND json=$WORK_DIR/stats-$BACKEND.json names

	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	ROCEMU_PCAP=$pcap start_daemon
	next_port
	run_pair "ibv_rc_pingpong -s 4096 -n 20" 30 \
		ibv_rc_pingpong -d rocemu0 -g 0 -c -p "$PAIR_PORT" -s 4096 -n 20 \
		--client ibv_rc_pingpong -d rocemu1 -g 0 -c -p "$PAIR_PORT" -s 4096 -n 20 127.0.0.1
	expect_both "^20 iters in " "ibv_rc_pingpong: 20 iterations"

	run_with_timeout 10 "$ROCEMU" stats --json >"$json" || fail "rocemu stats --json failed"
	capture 10 "$ROCEMU" stats
	names=$(awk '$1 == "rocemu0" { print $2 }' "$OUT" | sort | tr '\n' ' ')
	capture 10 python3 -c 'import json, sys; print(" ".join(sorted(json.load(open(sys.argv[1]))["rocemu0"])))' "$json" ||
		fail "rocemu stats --json is not JSON: $(head -c 300 "$json")"
	[ "$(tr -d '\n' <"$OUT") " = "$names" ] ||
		fail "the JSON names $(cat "$OUT"), the text report $names"
	ok "the JSON parses and names the text report's $(wc -w <<<"$names") counters and settings"

	capture 10 "$ROCEMU" stats rocemu1 || fail "rocemu stats rocemu1 failed"
	expect_none "^rocemu0 " "rocemu stats rocemu1: no line of rocemu0"
	expect "^rocemu1 port_xmit_packets [1-9]" "rocemu stats rocemu1: its counters"
	if capture 10 "$ROCEMU" stats nosuchdev --json; then
		fail "rocemu stats nosuchdev succeeded"
	fi
	expect_fixed "no device nosuchdev" "rocemu stats of an unknown device: an error naming it"

	stop_daemon "$ROCEMU_RUNTIME_DIR"
	capture 10 python3 -c "$COUNT_MATCHES" "$json" "$pcap/rocemu0.pcap" "$(addr 1)" rocemu0 ||
		fail "rocemu0's counters disagree with its capture"
	ok "$(cat "$OUT")"
	capture 10 python3 -c "$COUNT_MATCHES" "$json" "$pcap/rocemu1.pcap" "$(addr 2)" rocemu1 ||
		fail "rocemu1's counters disagree with its capture"
	ok "$(cat "$OUT")"
}

for_each_backend stats_json
