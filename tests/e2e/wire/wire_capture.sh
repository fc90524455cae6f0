#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# rocemu's captures show the wire. Two daemons as two hosts, each in a
# network namespace of its own, joined by a veth pair (198.18.247.1 and .2)
# whose MACs are those rocemu's captures give the addresses, with the
# offloads off so that the kernel's own capture shows each segment with its
# finished checksums. tcpdump captures on each end while unmodified clients
# run between the hosts (RC pingpongs up to 64 KiB, so GSO batches of many
# segments, UD pingpong, ib_write_bw, rping through the CM, and a datagram
# with UDP checksum 0 as RoCE NICs send them); then each
# host's capture by the kernel is compared with its daemon's own, frame by
# frame and byte by byte (IPv4 IDs, TTLs, checksums and ICRCs included), and
# every ICRC on the wire is checked over the IPv4 header that carried it.
NETNS_REQUIRED=1
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_pair.sh"
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_hosts.sh"
require_programs ibv_rc_pingpong ibv_ud_pingpong ib_write_bw rping ip tcpdump ethtool python3 tshark
require_built tests/e2e/wire/pcap_compare tests/e2e/wire/pcap_check
use_test_net 247
HOST_A=rocemu-wire-$$-a
HOST_B=rocemu-wire-$$-b
ADDR_A=198.18.247.1
ADDR_B=198.18.247.2
TCPDUMP_PIDS=()

# mac_of ADDR: the MAC rocemu's captures give ADDR, 02:00 and its four bytes.
mac_of() {
	local IFS=.

	# shellcheck disable=SC2086
	printf '02:00:%02x:%02x:%02x:%02x' $1
}

# wire_hosts: the two hosts, their veth ends with the MACs of rocemu's captures
# and no offloads (a skip where ethtool cannot turn them off).
wire_hosts() {
	local ns addr

	add_hosts
	for ns in "$HOST_A" "$HOST_B"; do
		addr=$([ "$ns" = "$HOST_A" ] && echo "$ADDR_A" || echo "$ADDR_B")
		ip -n "$ns" link set veth0 address "$(mac_of "$addr")" ||
			fail "cannot set the MAC of $ns's veth0"
		# Segmented and summed before the capture point, as a NIC without offloads sends.
		ip netns exec "$ns" ethtool -K veth0 tx off gso off gro off tx-udp-segmentation off \
			>/dev/null 2>&1 || skip "ethtool cannot turn the veth's offloads off"
	done
}

# start_tcpdump NS FILE FILTER: the kernel's capture of NS's veth end into FILE, once it listens.
start_tcpdump() {
	local err=$2.err

	echo "+ ip netns exec $1 tcpdump -i veth0 -s 0 -B 65536 -U --immediate-mode -w $2 $3 &" >>"$COMMANDS_LOG"
	run_with_timeout 300 ip netns exec "$1" tcpdump -i veth0 -s 0 -B 65536 -U --immediate-mode -w "$2" \
		--time-stamp-precision=nano "$3" 2>"$err" &
	TCPDUMP_PIDS+=($!)
	BACKGROUND_PIDS+=($!)
	for _ in $(seq 100); do
		grep -q "listening on" "$err" && return 0
		sleep 0.1
	done
	fail "tcpdump in $1 did not start: $(cat "$err")"
}

# wire_caught_up WIRE OURS: the kernel's capture holds as many frames as the daemon's (at most 10 s).
wire_caught_up() {
	local counts

	for _ in $(seq 100); do
		counts=$("$top_builddir/tests/e2e/wire/pcap_compare" "$1" "$2" | tail -n 1)
		[[ $counts =~ ([0-9]+)\ frames\ on\ the\ wire,\ ([0-9]+)\ captured ]] &&
			[ "${BASH_REMATCH[1]}" -ge "${BASH_REMATCH[2]}" ] && return 0
		sleep 0.1
	done
	echo "the kernel's capture $1 stays behind: $counts" >>"$COMMANDS_LOG"
}

stop_tcpdumps() {
	local pid

	for pid in "${TCPDUMP_PIDS[@]}"; do
		# TERM: a background job of a script ignores INT; tcpdump ends its file on either.
		kill "$pid" 2>/dev/null
		wait "$pid"
		forget_pid "$pid"
	done
	TCPDUMP_PIDS=()
	# What tcpdump says of packets the kernel dropped before it read them.
	cat "$WORK_DIR"/wire-"$BACKEND"-*.pcap.err >>"$COMMANDS_LOG"
}

# A UD SEND to QP 0xabc of $2, from $1 port 4792, as a ConnectX or rxe sends it: UDP
# checksum 0 (SO_NO_CHECK), DF and so IPv4 ID 0, the ICRC over that header.
UNSUMMED_SEND='
import socket, struct, sys, zlib
src, dst = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, 11, 1)			# SO_NO_CHECK
s.setsockopt(socket.IPPROTO_IP, 10, 2)			# IP_MTU_DISCOVER: IP_PMTUDISC_DO
s.bind((src, 4792))
pkt = struct.pack(">BBHII", 0x64, 0, 0xffff, 0xabc, 0) + struct.pack(">II", 0x11111111, 0x123) + b"unsummed"
udp_len = 8 + len(pkt) + 4
ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0xff, 20 + udp_len, 0, 0x4000, 0xff, 17, 0xffff,
                 socket.inet_aton(src), socket.inet_aton(dst))
udp = struct.pack(">HHHH", 4792, 4791, udp_len, 0xffff)
icrc = zlib.crc32(b"\xff" * 8 + ip + udp + pkt[:4] + b"\xff" + pkt[5:])
s.sendto(pkt + struct.pack("<I", icrc), (dst, 4791))
'

# clients: traffic of every kind between the hosts, server on A, client on B.
clients() {
	local size what

	PAIR_READY=listening_in_a
	for size in 1 4096 65536; do
		what="ibv_rc_pingpong -c -s $size -n 20, $ADDR_B -> $ADDR_A"
		next_port
		run_pair "$what" 30 ibv_rc_pingpong -d rocemu0 -g 0 -c -p "$PAIR_PORT" -s "$size" -n 20 \
			--client ibv_rc_pingpong -d rocemu0 -g 0 -c -p "$PAIR_PORT" -s "$size" -n 20 "$ADDR_A"
		expect_both "^20 iters in " "$what: every iteration"
	done
	what="ibv_ud_pingpong -c -s 1024 -n 20, $ADDR_B -> $ADDR_A"
	next_port
	run_pair "$what" 30 ibv_ud_pingpong -d rocemu0 -g 0 -c -p "$PAIR_PORT" -s 1024 -n 20 \
		--client ibv_ud_pingpong -d rocemu0 -g 0 -c -p "$PAIR_PORT" -s 1024 -n 20 "$ADDR_A"
	expect_both "^20 iters in " "$what: every iteration"
	what="ib_write_bw -n 50, $ADDR_B -> $ADDR_A"
	next_port
	run_pair "$what" 30 ib_write_bw -d rocemu0 -x 0 -F -p "$PAIR_PORT" -n 50 \
		--client ib_write_bw -d rocemu0 -x 0 -F -p "$PAIR_PORT" -n 50 "$ADDR_A"
	expect_both "^ 65536 +50 +[0-9.]+ +[0-9.]+[[:space:]]" "$what: 50 writes of 64 KiB"
	PAIR_READY=wait_cm_listening
	what="rping -C 10 -V, $ADDR_B -> $ADDR_A"
	next_port
	run_pair "$what" 30 rping -s -a "$ADDR_A" -p "$PAIR_PORT" -C 10 -V \
		--client rping -c -a "$ADDR_A" -p "$PAIR_PORT" -C 10 -V
	PAIR_READY=
	capture 10 ip netns exec "$HOST_B" python3 -c "$UNSUMMED_SEND" "$ADDR_B" "$ADDR_A" ||
		fail "cannot send a datagram without UDP checksum"
}

# compare_host NAME WIRE OURS: the kernel's capture against the daemon's, and the wire's ICRCs.
compare_host() {
	capture 60 "$top_builddir/tests/e2e/wire/pcap_compare" "$2" "$3" ||
		fail "$1: rocemu's capture is not the wire's"
	expect "^pcap_compare: [0-9]+ frames on the wire, [0-9]+ captured, [0-9]+ compared, 0 differences$" \
		"$1: rocemu's capture is the wire's, byte for byte"
	capture 60 "$top_builddir/tests/e2e/wire/pcap_check" "$2" ||
		fail "$1: a frame on the wire is not a valid RoCEv2 packet"
	ok "$1: every frame on the wire has a valid ICRC over the IPv4 header it carried"
}

wire_capture() {
	DIR_A=$ROCEMU_RUNTIME_DIR
	local dir_b=$WORK_DIR/run-$BACKEND-b wire_a=$WORK_DIR/wire-$BACKEND-a.pcap
	local wire_b=$WORK_DIR/wire-$BACKEND-b.pcap

	ROCEMU_PCAP_SNAPLEN=0 start_host "$HOST_A" "$ADDR_A" "$DIR_A"
	ROCEMU_PCAP_SNAPLEN=0 start_host "$HOST_B" "$ADDR_B" "$dir_b"
	start_tcpdump "$HOST_A" "$wire_a" "udp dst port 4791"
	# B's daemon does not send the test's own datagram without checksum; A's receives it.
	start_tcpdump "$HOST_B" "$wire_b" "udp dst port 4791 and not udp src port 4792"
	PAIR_SERVER_WRAP=(ip netns exec "$HOST_A" env ROCEMU_RUNTIME_DIR="$DIR_A")
	PAIR_CLIENT_WRAP=(ip netns exec "$HOST_B" env ROCEMU_RUNTIME_DIR="$dir_b")
	clients
	PAIR_SERVER_WRAP=()
	PAIR_CLIENT_WRAP=()
	# The daemons' captures are whole once they stopped; the kernel's once tcpdump wrote
	# every frame it saw: as many as the daemon's, or the comparison says which are missing.
	stop_daemon "$DIR_A"
	stop_daemon "$dir_b"
	wire_caught_up "$wire_a" "$DIR_A/pcap/rocemu0.pcap"
	wire_caught_up "$wire_b" "$dir_b/pcap/rocemu0.pcap"
	stop_tcpdumps
	compare_host "$HOST_A" "$wire_a" "$DIR_A/pcap/rocemu0.pcap"
	capture 30 tshark -r "$DIR_A/pcap/rocemu0.pcap" -Y "udp.srcport == 4792 && udp.checksum == 0" \
		-T fields -e frame.number || fail "tshark cannot read $DIR_A/pcap/rocemu0.pcap"
	expect "^[0-9]+$" "$HOST_A: its capture shows the datagram sent without UDP checksum with none"
	compare_host "$HOST_B" "$wire_b" "$dir_b/pcap/rocemu0.pcap"
}

wire_hosts
trap 'del_hosts; cleanup' EXIT
for_each_backend wire_capture
