/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The two figures an MPI user asks of a fabric, measured between two ranks
 * as the OSU micro-benchmarks do:
 * - latency: half the mean round trip of 8-byte MPI_Send/MPI_Recv
 *   ping-pongs, after warm-up ones;
 * - bandwidth: rank 0 posts a window of MPI_Isend of 1 MiB, rank 1 the
 *   matching MPI_Irecv, then a 1-byte reply ends the window; bytes over
 *   the time of all windows after warm-up ones.
 *
 *   mpirun -np 2 mpi_lat_bw
 *
 * Rank 0 prints "mpi_lat_bw: latency 8 B X us" and "mpi_lat_bw: bandwidth
 * 1048576 B Y MB/s" (MB = 10^6 bytes).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>

enum {
	LAT_SIZE = 8, LAT_WARMUP = 1000, LAT_ITERS = 10000,
	BW_SIZE = 1 << 20, BW_WINDOW = 16, BW_WARMUP = 2, BW_ITERS = 20,
};

static double latency_us(int rank, char *buf)
{
	double start = 0;

	for (int i = 0; i < LAT_WARMUP + LAT_ITERS; i++) {
		if (i == LAT_WARMUP)
			start = MPI_Wtime();
		if (rank == 0) {
			MPI_Send(buf, LAT_SIZE, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
			MPI_Recv(buf, LAT_SIZE, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(buf, LAT_SIZE, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(buf, LAT_SIZE, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
		}
	}
	return (MPI_Wtime() - start) * 1e6 / (2.0 * LAT_ITERS);
}

static double bandwidth_mbps(int rank, char *buf)
{
	MPI_Request reqs[BW_WINDOW];
	double start = 0;
	char ack = 0;

	for (int i = 0; i < BW_WARMUP + BW_ITERS; i++) {
		if (i == BW_WARMUP)
			start = MPI_Wtime();
		for (int w = 0; w < BW_WINDOW; w++) {
			char *slot = buf + (size_t)w * BW_SIZE;

			if (rank == 0)
				MPI_Isend(slot, BW_SIZE, MPI_BYTE, 1, 2, MPI_COMM_WORLD, &reqs[w]);
			else
				MPI_Irecv(slot, BW_SIZE, MPI_BYTE, 0, 2, MPI_COMM_WORLD, &reqs[w]);
		}
		MPI_Waitall(BW_WINDOW, reqs, MPI_STATUSES_IGNORE);
		if (rank == 0)
			MPI_Recv(&ack, 1, MPI_BYTE, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		else
			MPI_Send(&ack, 1, MPI_BYTE, 0, 3, MPI_COMM_WORLD);
	}
	return (double)BW_SIZE * BW_WINDOW * BW_ITERS / ((MPI_Wtime() - start) * 1e6);
}

int main(int argc, char **argv)
{
	int rank, ranks;
	char *buf;
	double lat, bw;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &ranks);
	if (ranks != 2) {
		fprintf(stderr, "mpi_lat_bw: run with exactly 2 ranks, not %d\n", ranks);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	buf = malloc((size_t)BW_WINDOW * BW_SIZE);
	if (!buf) {
		fprintf(stderr, "mpi_lat_bw: no memory for the window\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	memset(buf, rank, (size_t)BW_WINDOW * BW_SIZE);
	lat = latency_us(rank, buf);
	MPI_Barrier(MPI_COMM_WORLD);
	bw = bandwidth_mbps(rank, buf);
	if (rank == 0) {
		printf("mpi_lat_bw: latency %d B %.2f us\n", LAT_SIZE, lat);
		printf("mpi_lat_bw: bandwidth %d B %.1f MB/s\n", BW_SIZE, bw);
	}
	free(buf);
	MPI_Finalize();
	return 0;
}
