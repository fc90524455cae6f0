#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Dynamic processes with unmodified Open MPI over UCX over rocemu:
# tests/e2e/apps/mpi_spawn, one rank, spawns 2 children in each of 8 rounds
# (MPI_Comm_spawn, MPI_Intercomm_merge, a checked MPI_Alltoall,
# MPI_Comm_disconnect), so every round's children are new processes that
# make new QPs on rocemu0 while the parent's UCX still remembers the old
# ones. Over UCX configurations that wire up or carry messages over UD:
# UCX's default, rc_verbs with ud_verbs, ud_verbs, and rc_mlx5 with
# ud_mlx5. UCX's UD keeps a closed connection for minutes under the peer's
# GID and QP number (UCX_UD_LINGER_TIMEOUT): a new process given the number
# of a gone one was taken for it (ud_ep.c, "Assertion `...ep_id ==
# ep->dest_ep_id' failed") until rocemu handed out QP numbers round their
# whole range, as a NIC does.
#
# Open MPI 4.1 with PMIx 4 (Debian 12's) sometimes leaves a spawned child
# waiting in MPI_Init for its runtime (PMIx_Init) forever, the other child
# and the parent waiting for it; it does so over UCX's tcp too (openpmix
# issues 2735 and 2967). A run that stops printing for STALL_SECS with a
# child that never opened rocemu0 is that hang, and the run is made again
# (at most ATTEMPTS runs); any other failure or hang fails the test.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
MPI_SPAWN=$top_builddir/tests/e2e/apps/mpi_spawn
command -v mpirun >/dev/null || skip "mpirun not installed (Debian package openmpi-bin)"
[ -x "$MPI_SPAWN" ] ||
	skip "mpi_spawn not built: configure found no Open MPI mpicc (Debian package libopenmpi-dev)"
use_test_net 201

# Open MPI's and UCX's own allocations at exit are not the shim's to answer for.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
ROUNDS=8
CHILDREN=2
BLOCK=4096		# mpi_spawn.c's, from each process to each
STALL_SECS=20		# a round takes a second or two, some under ASan
START_SECS=40
ATTEMPTS=5
MPIRUN=(mpirun -np 1 --oversubscribe --allow-run-as-root --timeout 140 --mca btl self
	--mca pml ucx --mca pml_base_verbose 10)

# In a sanitizer build `rocemu run` preloads the ASan runtime ahead of the
# shim, and mpirun, unsanitized and threaded, forks every process it
# spawns: GCC 12's runtime does not hold its allocator's lock across fork,
# and a child forked while another thread of mpirun allocated hung before
# its exec. There mpirun runs with neither (it opens no device) and hands
# the preload to the MPI processes: bash -c "$MPIRUN_PRELOAD" mpirun ARG...
# shellcheck disable=SC2016 # expanded by that shell
MPIRUN_PRELOAD='case $LD_PRELOAD in
*libasan*) p=$LD_PRELOAD; unset LD_PRELOAD; exec "$0" -x LD_PRELOAD="$p" "$@" ;;
esac
exec "$0" "$@"'

# ours NAMES: the pids of this test's processes named NAMES (an ERE), their
# environment naming its runtime dir.
ours() {
	local pid

	for pid in $(pgrep -x "$1"); do
		tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null |
			grep -qxF "ROCEMU_RUNTIME_DIR=$ROCEMU_RUNTIME_DIR" && echo "$pid"
	done
}

# off_device: those of ours that have no context on the daemon: they have
# not come as far as UCX's start in MPI_Init.
off_device() {
	local clients pid

	clients=$(run_with_timeout 5 "$ROCEMU" status) || fail "rocemud does not answer"
	clients=$(awk '$1 == "client" && $2 == "pid" { print $3 }' <<<"$clients")
	for pid in $(ours mpi_spawn); do
		grep -qx "$pid" <<<"$clients" || echo "$pid"
	done
}

# note_qpns: append "QPN PID" for every QP the daemon has now to $QPNS.
note_qpns() {
	run_with_timeout 5 "$ROCEMU" status |
		awk '$1 == "client" && $2 == "pid" { pid = $3 } $1 == "qp" { print $2, pid }' >>"$QPNS"
}

# spawn_attempt WHAT CMD...: CMD in the background, output in $OUT, until
# it exits (0, its status in SPAWN_RC) or stalls (1, still running as
# SPAWN_PID): no output for STALL_SECS once it printed, or none at all for
# START_SECS. The QPs it has are noted every half second.
spawn_attempt() {
	local what=$1 size last=0 still=0 limit=$((START_SECS * 2))

	shift
	echo "+ ${ROCEMU_NET:+ROCEMU_NET=$ROCEMU_NET }$*" >>"$COMMANDS_LOG"
	run_with_timeout 150 "$@" >"$OUT" 2>&1 &
	SPAWN_PID=$!
	BACKGROUND_PIDS+=("$SPAWN_PID")
	while kill -0 "$SPAWN_PID" 2>/dev/null; do
		sleep 0.5
		note_qpns
		size=$(stat -c %s "$OUT")
		if [ "$size" != "$last" ]; then
			last=$size
			still=0
			limit=$((STALL_SECS * 2))
		elif [ $((++still)) -ge "$limit" ]; then
			cat "$OUT" >>"$COMMANDS_LOG"
			echo "($what: no output for $((limit / 2)) s)" >>"$COMMANDS_LOG"
			return 1
		fi
	done
	SPAWN_RC=0
	wait "$SPAWN_PID" || SPAWN_RC=$?
	forget_pid "$SPAWN_PID"
	cat "$OUT" >>"$COMMANDS_LOG"
	[ "$SPAWN_RC" -eq 0 ] || echo "(exit status $SPAWN_RC)" >>"$COMMANDS_LOG"
	return 0
}

# spawn_run TLS LANE: mpi_spawn over UCX_TLS=TLS (UCX's default when
# empty) on rocemu0; every process chose pml ucx, every round's data was
# checked on every side, no UCX or sanitizer error, UCX carries tags over
# LANE on rocemu0, and no QP number seen was held by two processes (the
# parent's UCX would take the second for the first). With CHECK_BYTES,
# rocemu0 received at least the exchanges' bytes.
spawn_run() {
	local tls=$1 lane=$2 what attempt stuck before after tls_opt=() start pid reused
	local per_round=$(((CHILDREN + 1) * CHILDREN * BLOCK))

	what="mpi_spawn ($ROUNDS rounds of $CHILDREN children) over UCX's default transports"
	if [ -n "$tls" ]; then
		what="mpi_spawn ($ROUNDS rounds of $CHILDREN children) over UCX_TLS=$tls"
		tls_opt=(-x UCX_TLS="$tls")
	fi
	before=$(rcv_bytes rocemu0)
	start=$SECONDS
	QPNS=$WORK_DIR/qpns
	: >"$QPNS"
	for attempt in $(seq "$ATTEMPTS"); do
		if spawn_attempt "$what" "$ROCEMU" run -- bash -c "$MPIRUN_PRELOAD" \
			"${MPIRUN[@]}" "${tls_opt[@]}" -x UCX_NET_DEVICES=rocemu0:1 \
			-x UCX_LOG_LEVEL=info "$MPI_SPAWN" "$ROUNDS"; then
			[ "$SPAWN_RC" -eq 0 ] || fail "$what failed (exit status $SPAWN_RC)"
			break
		fi
		stuck=$(off_device | tr '\n' ' ')
		kill "$SPAWN_PID" 2>/dev/null
		wait "$SPAWN_PID"
		forget_pid "$SPAWN_PID"
		# a child stuck in its runtime's start outlives mpirun, as would a fork of
		# mpirun stuck before its exec
		for pid in $(ours 'mpi_spawn|mpirun'); do
			kill -KILL "$pid" 2>/dev/null
		done
		[ -n "$stuck" ] ||
			fail "$what hangs, every process of it on rocemu0"
		echo "$what: attempt $attempt hung in Open MPI's runtime start (pid" \
			"${stuck% } never opened rocemu0), again"
		[ "$attempt" -lt "$ATTEMPTS" ] || fail "$what: Open MPI's runtime hung $ATTEMPTS times"
	done
	after=$(rcv_bytes rocemu0)
	ok "$what: done in $((SECONDS - start)) s"
	[ "$(grep -c '\] select: component ucx selected$' "$OUT")" -eq $((1 + ROUNDS * CHILDREN)) ] ||
		fail "$what: Open MPI does not say that all $((1 + ROUNDS * CHILDREN)) processes chose pml ucx"
	ok "$what: all $((1 + ROUNDS * CHILDREN)) processes chose pml ucx"
	expect "^parent: $ROUNDS rounds of $CHILDREN children checked$" "$what: the parent checked every round"
	[ "$(grep -E "^child [0-9]+ of round [0-9]+: checked$" "$OUT" | sort -u | wc -l)" -eq \
		$((ROUNDS * CHILDREN)) ] || fail "$what: not every child of every round checked its data"
	ok "$what: all $((ROUNDS * CHILDREN)) children checked their data"
	expect_none "UCX +ERROR|Assertion|Bug:" "$what: no UCX error"
	expect_none "AddressSanitizer|LeakSanitizer|runtime error" "$what: no sanitizer report"
	! grep -Eq 'AddressSanitizer|LeakSanitizer|runtime error' "$ROCEMU_RUNTIME_DIR/rocemud.log" ||
		fail "$what: the daemon reports a sanitizer error"
	expect "ep_cfg\[[0-9]+\]: tag\(.*$lane/rocemu0:1" "$what: tags over $lane/rocemu0:1"
	reused=$(sort -u "$QPNS" | awk '{ print $1 }' | uniq -d | tr '\n' ' ')
	[ -z "$reused" ] || fail "$what: QP numbers held by one process and then another: $reused"
	ok "$what: $(awk '{ print $1 }' "$QPNS" | sort -u | wc -l) QP numbers seen, none held by two processes"
	if [ -n "${CHECK_BYTES:-}" ]; then
		[ "$((after - before))" -ge "$((ROUNDS * per_round))" ] ||
			fail "$what: rocemu0 received $((after - before)) bytes, less than $((ROUNDS * per_round))"
		ok "$what: rocemu0 received $((after - before)) bytes for $((ROUNDS * per_round)) exchanged"
	fi
}

mpi_spawn() {
	ROCEMU_DEVICES="rocemu0=$(addr 1)"
	export ROCEMU_DEVICES
	start_daemon
	# UCX's default: tags over shared memory and rc_mlx5, which UD wires up.
	spawn_run "" rc_mlx5
	CHECK_BYTES=1 spawn_run rc_verbs,ud_verbs:aux,self rc_verbs
	CHECK_BYTES=1 spawn_run ud_verbs,self ud_verbs
	CHECK_BYTES=1 spawn_run rc_mlx5,ud_mlx5:aux,self rc_mlx5
}

for_each_backend mpi_spawn
