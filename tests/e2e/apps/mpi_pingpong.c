/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Two MPI ranks send each other messages of every power of two from 1 B to
 * 4 MiB: rank 0 sends, rank 1 checks every byte and sends back a different
 * pattern, which rank 0 checks. A message of the wrong length or with one
 * wrong byte aborts the job with a line saying where.
 *
 *   mpirun -np 2 mpi_pingpong [ROUNDS]
 *
 * Each rank ends with "rank R: N sizes from 1 B to 4194304 B checked both ways".
 * With ROUNDS, the sizes one short of each power of two from 4 B on (3 B,
 * 7 B, ... 4194303 B: never a whole packet or fragment) join them, and the
 * whole ladder is climbed ROUNDS times; the line ends ", ROUNDS rounds".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>

#define MAX_SIZE (4u << 20)

/* Byte I of the message of SIZE bytes going from rank FROM: no period a shift could hide. */
static uint8_t pattern(size_t i, size_t size, int from)
{
	uint32_t x = ((uint32_t)i * 2654435761u) ^ (uint32_t)size ^ ((uint32_t)from << 24);

	return (uint8_t)((x >> 13) ^ x);
}

static void fill(uint8_t *buf, size_t size, int from)
{
	for (size_t i = 0; i < size; i++)
		buf[i] = pattern(i, size, from);
}

/* Receive SIZE bytes from rank FROM into BUF (scribbled first) and check each; abort on a wrong one. */
static void recv_checked(uint8_t *buf, size_t size, int from, int rank)
{
	MPI_Status status;
	int count;

	memset(buf, ~pattern(0, size, from), size);
	MPI_Recv(buf, (int)size, MPI_BYTE, from, (int)size, MPI_COMM_WORLD, &status);
	MPI_Get_count(&status, MPI_BYTE, &count);
	if ((size_t)count != size) {
		fprintf(stderr, "rank %d: message of %zu B from rank %d arrived with %d B\n",
			rank, size, from, count);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	for (size_t i = 0; i < size; i++) {
		if (buf[i] != pattern(i, size, from)) {
			fprintf(stderr, "rank %d: message of %zu B from rank %d: byte %zu is 0x%02x, "
				"expected 0x%02x\n", rank, size, from, i, buf[i],
				pattern(i, size, from));
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
	}
}

static void send_pattern(uint8_t *buf, size_t size, int to, int rank)
{
	fill(buf, size, rank);
	MPI_Send(buf, (int)size, MPI_BYTE, to, (int)size, MPI_COMM_WORLD);
}

/* One message each way of SIZE bytes. */
static void exchange(uint8_t *buf, size_t size, int rank)
{
	if (rank == 0) {
		send_pattern(buf, size, 1, rank);
		recv_checked(buf, size, 1, rank);
	} else {
		recv_checked(buf, size, 0, rank);
		send_pattern(buf, size, 0, rank);
	}
}

/* The ladder once: each power of two, after the size one short of it when ODD; how many sizes. */
static int climb(uint8_t *buf, int rank, int odd)
{
	int sizes = 0;

	for (size_t size = 1; size <= MAX_SIZE; size *= 2, sizes++) {
		if (odd && size >= 4) {
			exchange(buf, size - 1, rank);
			sizes++;
		}
		exchange(buf, size, rank);
	}
	return sizes;
}

int main(int argc, char **argv)
{
	int rank, ranks, sizes = 0, rounds = 1;
	uint8_t *buf;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &ranks);
	if (argc > 1)
		rounds = atoi(argv[1]);
	if (argc > 2 || rounds < 1) {
		fprintf(stderr, "usage: mpi_pingpong [ROUNDS], ROUNDS at least 1\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	if (ranks != 2) {
		fprintf(stderr, "rank %d: run with exactly 2 ranks, not %d\n", rank, ranks);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	buf = malloc(MAX_SIZE);
	if (!buf) {
		fprintf(stderr, "rank %d: no memory for %u B\n", rank, MAX_SIZE);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	for (int round = 0; round < rounds; round++)
		sizes = climb(buf, rank, argc > 1);
	if (argc > 1)
		printf("rank %d: %d sizes from 1 B to %u B checked both ways, %d rounds\n", rank, sizes,
		       MAX_SIZE, rounds);
	else
		printf("rank %d: %d sizes from 1 B to %u B checked both ways\n", rank, sizes, MAX_SIZE);
	free(buf);
	MPI_Finalize();
	return 0;
}
