# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# shellcheck shell=bash
# Sourced by tests running rdmacm-utils pairs: rping and ucmatose between two
# addresses, their output asserted. The server is ready once its CM id listens.
. "$(dirname "${BASH_SOURCE[0]}")/lib_pair.sh"

PAIR_READY=wait_cm_listening
PAIR_LOSSY=

# expect_fixed_in FILE TEXT WHAT: FILE has a line containing TEXT.
expect_fixed_in() {
	grep -qF -- "$2" "$1" || fail "$3: no line with '$2'"
	ok "$3"
}

# rping_pair SERVER_ADDR CLIENT_ADDR: 100 pings validated, client bound to CLIENT_ADDR.
rping_pair() {
	local what="rping -C 100 -V, $2 -> $1"

	next_port
	run_pair "$what" 30 rping -s -a "$1" -p "$PAIR_PORT" -C 100 -V \
		--client rping -c -a "$1" -I "$2" -p "$PAIR_PORT" -C 100 -v -V
	[ "$(grep -c '^ping data: rdma-ping-' "$CLIENT_OUT")" -eq 100 ] ||
		fail "$what: the client shows $(grep -c '^ping data: rdma-ping-' "$CLIENT_OUT") of 100 pings"
	expect_fixed_in "$CLIENT_OUT" "ping data: rdma-ping-99: " "$what: the 100th ping's data"
	if grep -qiE "invalid|mismatch|error" "$SERVER_OUT" "$CLIENT_OUT"; then
		fail "$what: an error or invalid data was reported"
	fi
	ok "$what: no invalid data"
}

ucmatose_pair() {
	local what="ucmatose -c 4 -C 10, $2 -> $1"

	next_port
	run_pair "$what" 30 ucmatose -b "$1" -p "$PAIR_PORT" -c 4 -C 10 \
		--client ucmatose -s "$1" -b "$2" -p "$PAIR_PORT" -c 4 -C 10
	grep -q "^return status 0" "$SERVER_OUT" && grep -q "^return status 0" "$CLIENT_OUT" ||
		fail "$what: not both sides report status 0"
	ok "$what: 4 connections, data transfers complete on both sides"
}
