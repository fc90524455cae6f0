#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Unmodified Open MPI between two hosts with its own choice of everything
# below the PML: two daemons, each in a network namespace of its own joined
# by a veth pair (198.18.93.1 and .2), mpirun in the first host and one rank
# in each. mpirun reaches the second host as it would over ssh, through an
# rsh agent that enters that host's namespaces; each side also has an IPC
# namespace of its own, or UCX would take the two for one host (see
# ucx_two_hosts.sh). `--mca pml ''` is Open MPI's own default (Debian's
# configuration file says pml = ^ucx); no UCX_TLS, no UCX_NET_DEVICES.
# A long run: tests/e2e/apps/mpi_pingpong climbs every power of two from
# 1 B to 4 MiB and the sizes one short of each, ten times, both ways,
# every byte checked. Both ranks must choose pml ucx, UCX must carry the
# tags over rc_mlx5 or dc_mlx5 on rocemu0 (its ep_cfg line), and each
# host's device must have received at least the bytes sent to it.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_hosts.sh"
MPI_PINGPONG=$top_builddir/tests/e2e/apps/mpi_pingpong
command -v mpirun >/dev/null || skip "mpirun not installed (Debian package openmpi-bin)"
[ -x "$MPI_PINGPONG" ] ||
	skip "mpi_pingpong not built: configure found no Open MPI mpicc (Debian package libopenmpi-dev)"
require_programs ip unshare
use_test_net 93
HOST_A=rocemu-mpi2-$$-a
HOST_B=rocemu-mpi2-$$-b
ADDR_A=198.18.93.1
ADDR_B=198.18.93.2
ROUNDS=10
# Each round, each way: 1 + 2 + ... + 4 MiB, and 3 + 7 + ... + (4 MiB - 1).
PAYLOAD_EACH_WAY=$((ROUNDS * ((1 << 24) - 26)))

# Open MPI's and UCX's own allocations at exit are not the shim's to answer for.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}

# write_rsh_agent FILE DIR_B: what mpirun runs instead of ssh to start its
# daemon on host B: the command line it is given, in host B's network
# namespace and an IPC namespace of its own, over the daemon of DIR_B.
write_rsh_agent() {
	cat >"$1" <<EOF
#!/bin/sh
# rsh agent: \$1 is host B's address, the rest a shell command for it.
shift
exec ip netns exec $HOST_B unshare --ipc env ROCEMU_RUNTIME_DIR=$2 $ROCEMU run -- sh -c "\$*"
EOF
	chmod +x "$1"
}

mpi_two_hosts() {
	local dir_a=$ROCEMU_RUNTIME_DIR dir_b=$WORK_DIR/run-$BACKEND-b agent=$WORK_DIR/rsh-agent
	local what="mpirun --mca pml '' between two hosts, $ROUNDS rounds" dir got rank

	start_host "$HOST_A" "$ADDR_A" "$dir_a"
	start_host "$HOST_B" "$ADDR_B" "$dir_b"
	write_rsh_agent "$agent" "$dir_b"
	printf '%s slots=1\n%s slots=1\n' "$ADDR_A" "$ADDR_B" >"$WORK_DIR/hostfile"
	capture 240 ip netns exec "$HOST_A" unshare --ipc "$ROCEMU" run -- \
		mpirun -np 2 --allow-run-as-root --timeout 200 --bind-to none --hostfile "$WORK_DIR/hostfile" \
		--mca plm_rsh_agent "$agent" --mca oob_tcp_if_include "$ADDR_A/24" \
		--mca pml '' --mca pml_base_verbose 10 -x UCX_LOG_LEVEL=info \
		"$MPI_PINGPONG" "$ROUNDS" || fail "$what failed"
	[ "$(grep -c '\] select: component ucx selected$' "$OUT")" -eq 2 ] ||
		fail "$what: Open MPI does not say that both ranks chose pml ucx"
	ok "$what: both ranks chose pml ucx"
	for rank in 0 1; do
		expect "^rank $rank: 44 sizes from 1 B to 4194304 B checked both ways, $ROUNDS rounds$" \
			"$what: rank $rank checked every byte of every size"
	done
	[ "$(grep -Ec "ep_cfg\[[0-9]+\]: tag\((rc|dc)_mlx5/rocemu0:1\)$" "$OUT")" -ge 2 ] ||
		fail "$what: UCX does not say that each rank sends its tags to the other over rc_mlx5 or dc_mlx5 on rocemu0"
	ok "$what: each rank's tags to the other go over $(grep -oE "tag\((rc|dc)_mlx5/rocemu0:1\)$" "$OUT" | sort -u | tr '\n' ' ')alone"
	expect_none "UCX +ERROR" "$what: no UCX error"
	for dir in "$dir_a" "$dir_b"; do
		got=$(ROCEMU_RUNTIME_DIR=$dir rcv_bytes rocemu0)
		[ "${got:-0}" -ge "$PAYLOAD_EACH_WAY" ] ||
			fail "$what: rocemu0 of $dir received ${got:-0} bytes, less than the $PAYLOAD_EACH_WAY sent to it"
		ok "$what: rocemu0 of $dir received $got bytes for $PAYLOAD_EACH_WAY of messages"
	done
	stop_daemon "$dir_a"
	stop_daemon "$dir_b"
}

add_hosts
trap 'del_hosts; cleanup' EXIT
for_each_backend mpi_two_hosts
