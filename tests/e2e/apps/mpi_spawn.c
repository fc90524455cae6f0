/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Dynamic processes: one rank spawns 2 children of its own program in each
 * of ROUNDS rounds (MPI_Comm_spawn), merges the intercommunicator with them
 * (MPI_Intercomm_merge) and the three exchange checked blocks with
 * MPI_Alltoall; then the children disconnect (MPI_Comm_disconnect) and
 * exit, and the next round's children are new processes. Every block names
 * its round, sender and receiver in each byte's pattern: a block of the
 * wrong round or peer, or one wrong byte, aborts the job with a line
 * saying where.
 *
 *   mpirun -np 1 mpi_spawn [ROUNDS]
 *
 * The parent ends with "parent: R rounds of 2 children checked"; each child
 * says "child C of round N: checked".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>

#define CHILDREN 2
#define BLOCK 4096	/* bytes from each process to each */

/* Byte I of the block from FROM to TO in ROUND: no period a shift could hide. */
static uint8_t pattern(size_t i, int round, int from, int to)
{
	uint32_t x = ((uint32_t)i * 2654435761u) ^ ((uint32_t)round << 20) ^
		     ((uint32_t)from << 12) ^ ((uint32_t)to << 4);

	return (uint8_t)((x >> 13) ^ x);
}

/* One all-to-all over MERGED (the parent and the round's children), each block checked. */
static void exchange(MPI_Comm merged, int round, const char *who)
{
	int rank, ranks;
	uint8_t *out, *in;

	MPI_Comm_rank(merged, &rank);
	MPI_Comm_size(merged, &ranks);
	if (ranks != CHILDREN + 1) {
		fprintf(stderr, "%s: round %d has %d processes, not %d\n", who, round, ranks,
			CHILDREN + 1);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	out = malloc((size_t)ranks * BLOCK);
	in = malloc((size_t)ranks * BLOCK);
	if (!out || !in) {
		fprintf(stderr, "%s: no memory for %d blocks\n", who, 2 * ranks);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	for (int to = 0; to < ranks; to++)
		for (size_t i = 0; i < BLOCK; i++)
			out[(size_t)to * BLOCK + i] = pattern(i, round, rank, to);
	memset(in, ~pattern(0, round, 0, rank), (size_t)ranks * BLOCK);
	MPI_Alltoall(out, BLOCK, MPI_BYTE, in, BLOCK, MPI_BYTE, merged);
	for (int from = 0; from < ranks; from++) {
		for (size_t i = 0; i < BLOCK; i++) {
			uint8_t got = in[(size_t)from * BLOCK + i];

			if (got != pattern(i, round, from, rank)) {
				fprintf(stderr, "%s: round %d: byte %zu from rank %d is 0x%02x, "
					"expected 0x%02x\n", who, round, i, from, got,
					pattern(i, round, from, rank));
				MPI_Abort(MPI_COMM_WORLD, 1);
			}
		}
	}
	free(out);
	free(in);
}

static void child(MPI_Comm parent, const char *round_arg)
{
	int round = atoi(round_arg), rank;
	MPI_Comm merged;
	char who[64];

	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	snprintf(who, sizeof(who), "child %d of round %d", rank, round);
	MPI_Intercomm_merge(parent, 1, &merged);
	exchange(merged, round, who);
	MPI_Comm_free(&merged);
	MPI_Comm_disconnect(&parent);
	printf("%s: checked\n", who);
}

static void parent(const char *program, int rounds)
{
	int errcodes[CHILDREN];

	for (int round = 0; round < rounds; round++) {
		char round_arg[16];
		char *args[] = { round_arg, NULL };
		MPI_Comm inter, merged;

		snprintf(round_arg, sizeof(round_arg), "%d", round);
		MPI_Comm_spawn(program, args, CHILDREN, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter,
			       errcodes);
		for (int i = 0; i < CHILDREN; i++) {
			if (errcodes[i] != MPI_SUCCESS) {
				fprintf(stderr, "parent: round %d: child %d not spawned (%d)\n",
					round, i, errcodes[i]);
				MPI_Abort(MPI_COMM_WORLD, 1);
			}
		}
		MPI_Intercomm_merge(inter, 0, &merged);
		exchange(merged, round, "parent");
		MPI_Comm_free(&merged);
		MPI_Comm_disconnect(&inter);
		printf("parent: round %d checked\n", round);
		fflush(stdout);
	}
	printf("parent: %d rounds of %d children checked\n", rounds, CHILDREN);
}

int main(int argc, char **argv)
{
	MPI_Comm up;
	int ranks;

	MPI_Init(&argc, &argv);
	MPI_Comm_get_parent(&up);
	if (up != MPI_COMM_NULL) {
		if (argc != 2) {
			fprintf(stderr, "child: spawned without its round\n");
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
		child(up, argv[1]);
	} else {
		MPI_Comm_size(MPI_COMM_WORLD, &ranks);
		if (ranks != 1) {
			fprintf(stderr, "run with 1 rank, not %d\n", ranks);
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
		parent(argv[0], argc > 1 ? atoi(argv[1]) : 8);
	}
	MPI_Finalize();
	return 0;
}
