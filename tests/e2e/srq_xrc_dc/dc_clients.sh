#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Unmodified perftest over mlx5 DC, server on rocemu0 and client on rocemu1
# as two processes: ib_send_bw, ib_write_bw and ib_read_bw with -c DC (a
# DCT on an SRQ, a DCI posting through mlx5dv_wr_set_dc_addr_stream) and
# with --log_dci_streams=2 (a DCI with four streams). Both captures decode
# in tshark as DC (the RD opcodes) with no malformed frame.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_pair.sh"
require_programs ib_send_bw ib_write_bw ib_read_bw ss
use_test_net 111

# perftest_dc TOOL SIZE ITERS [OPTION...]
perftest_dc() {
	local tool=$1 size=$2 iters=$3 what

	shift 3
	what="$tool -c DC -s $size -n $iters${*:+ $*}"
	next_port
	run_pair "$what" 60 \
		"$tool" -c DC -d rocemu0 -x 0 -F -p "$PAIR_PORT" -s "$size" -n "$iters" "$@" \
		--client \
		"$tool" -c DC -d rocemu1 -x 0 -F -p "$PAIR_PORT" -s "$size" -n "$iters" "$@" 127.0.0.1
	expect_both "^ Connection type : DC" "$what: DC QPs"
	expect_both "^ *#bytes +#iterations " "$what: report header"
	expect_client "^ *$size +$iters +[0-9]+\.[0-9]+" "$what: report line"
	grep -E "^ *$size +$iters " "$CLIENT_OUT"
}

dc_clients() {
	local pcap_dir=$WORK_DIR/pcap-$BACKEND tool

	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	ROCEMU_LOG=info ROCEMU_PCAP=$pcap_dir start_daemon
	for tool in ib_send_bw ib_write_bw ib_read_bw; do
		perftest_dc "$tool" 65536 200
		perftest_dc "$tool" 4096 200 --log_dci_streams=2
	done
	perftest_dc ib_send_bw 1 500
	stop_daemon "$ROCEMU_RUNTIME_DIR"
	if command -v tshark >/dev/null; then
		# DC takes RD's opcodes, 0x40-0x54 (Wireshark's DctOpCodeMap)
		expect_decoded "$pcap_dir/rocemu0.pcap" '^eth:.*:infiniband.*[[:space:]](6[4-9]|7[0-9]|8[0-4])$' "DC"
		expect_decoded "$pcap_dir/rocemu1.pcap" '^eth:.*:infiniband.*[[:space:]](6[4-9]|7[0-9]|8[0-4])$' "DC"
	else
		echo "skip the capture check: tshark is not installed"
	fi
}

for_each_backend dc_clients
