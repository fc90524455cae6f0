#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# libfabric's verbs provider (Debian's libfabric-bin, unmodified) over
# rocemu: fi_info -p verbs lists rocemu0 and rocemu1 as MSG endpoints over
# the RDMA CM, and their UD domains; fi_pingpong runs with its data checks
# (-c) in MSG mode (verbs) and in RDM mode (verbs;ofi_rxm, a connection per
# peer over the CM). libfabric ignores loopback interfaces, so the test gives
# the devices addresses on a veth pair in a network namespace of its own.
# RDM runs again over XRC (FI_VERBS_PREFER_XRC=1 with rxm's shared receive
# context), its capture showing XRC packets.
# fi_pingpong's server names no address: the provider binds "localhost",
# which the kernel's CM (and rocemu's) takes as the wildcard, and then
# listens on the addresses of the interfaces of its devices.
NETNS_REQUIRED=1
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_netns.sh"
if ! { ip link set lo up && ip link add fab0 type veth peer name fab1 &&
	ip addr add 198.18.252.1/22 dev fab0 && ip addr add 198.18.252.2/22 dev fab1 &&
	ip addr add 198.18.253.1/22 dev fab0 && ip addr add 198.18.253.2/22 dev fab1 &&
	ip link set fab0 up && ip link set fab1 up; } 2>/dev/null; then
	echo "SKIP: libfabric: cannot make a veth pair in the test's network namespace"
	exit 77
fi
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_pair.sh"
command -v fi_info >/dev/null || skip "fi_info not installed (Debian package libfabric-bin)"
command -v fi_pingpong >/dev/null || skip "fi_pingpong not installed (Debian package libfabric-bin)"
use_test_net 23
PAIR_LOSSY=

# fab_addr I: device I's address on the veth pair, one /24 per backend.
fab_addr() {
	echo "198.18.$((252 + BACKEND_INDEX)).$1"
}

# pingpong PROVIDER EP [VAR=VALUE...]: fi_pingpong -c (each message checked)
# between two processes with the environment given: on both sides, 10 round
# trips of each size, 64 bytes to 1 MiB.
pingpong() {
	local what="${*:3} fi_pingpong -p '$1' -e $2 -I 10 -c" out rows

	next_port
	run_pair "${what# }" 30 env "${@:3}" fi_pingpong -p "$1" -e "$2" -I 10 -c -B "$PAIR_PORT" \
		--client env "${@:3}" fi_pingpong -p "$1" -e "$2" -I 10 -c -P "$PAIR_PORT" "$(fab_addr 1)"
	for out in "$SERVER_OUT" "$CLIENT_OUT"; do
		rows=$(grep -Ec '^(64|256|1k|4k|64k|1m) +10 +=10 ' "$out")
		[ "$rows" -eq 6 ] || fail "$what: $rows of 6 sizes show 10 messages sent and acknowledged in $out"
	done
	ok "${what# }: both sides sent and acknowledged 10 checked messages of each of 6 sizes"
}

# xrc_frames PCAP: how many of the first 2000 frames of PCAP carry an XRC opcode (0xa0-0xbf).
xrc_frames() {
	capture 30 tshark -r "$1" -c 2000 "${TSHARK_IB[@]}" -T fields -e infiniband.bth.opcode ||
		fail "tshark cannot read $1"
	awk '$1 >= 160 && $1 < 192' "$OUT" | wc -l
}

libfabric() {
	local dev frames

	ROCEMU_DEVICES="rocemu0=$(fab_addr 1),rocemu1=$(fab_addr 2)"
	export ROCEMU_DEVICES
	start_daemon
	capture 30 "$ROCEMU" run -- fi_info -p verbs || fail "fi_info -p verbs failed"
	for dev in rocemu0 rocemu1; do
		grep -A3 "domain: $dev\$" "$OUT" | grep -q "protocol: FI_PROTO_RDMA_CM_IB_RC" ||
			fail "fi_info -p verbs does not list $dev as an RDMA CM MSG domain"
		ok "fi_info -p verbs lists $dev: FI_EP_MSG, FI_PROTO_RDMA_CM_IB_RC"
	done
	expect "domain: rocemu0-dgram$" "fi_info -p verbs lists rocemu0's UD (dgram) domain"

	pingpong verbs msg
	pingpong "verbs;ofi_rxm" rdm

	# XRC under rxm: a shared receive context (an SRQ) is what the XRC domain asks for.
	stop_daemon "$ROCEMU_RUNTIME_DIR"
	ROCEMU_PCAP=$ROCEMU_RUNTIME_DIR/pcap start_daemon
	pingpong "verbs;ofi_rxm" rdm FI_VERBS_PREFER_XRC=1 FI_OFI_RXM_USE_SRX=1
	stop_daemon "$ROCEMU_RUNTIME_DIR"
	if command -v tshark >/dev/null; then
		frames=$(xrc_frames "$ROCEMU_RUNTIME_DIR/pcap/rocemu0.pcap")
		[ "$frames" -gt 0 ] || fail "FI_VERBS_PREFER_XRC=1: no XRC packet in rocemu0's capture"
		ok "FI_VERBS_PREFER_XRC=1: rocemu0's capture shows XRC packets ($frames of its first 2000 frames)"
	else
		echo "skip the XRC capture check: tshark is not installed"
	fi
}

for_each_backend libfabric
