/*
 * A 2+ rank MPI job with one straggler (t119): every step each rank computes,
 * then all ranks meet in an MPI_Allreduce. The rank named by argv[1] computes
 * five times as long, so the others spend that time waiting inside the
 * all-reduce (Open MPI polls: its progress loop is on the CPU, and on their
 * profiles). Three times was too close under ASan on two busy CPUs (the
 * fast rank's compute share read 0.39 against the slow one's 0.78, where
 * t119 wants less than half).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static double __attribute__((noinline)) compute(long n)
{
	double s = 0;
	for (long i = 0; i < n; i++)
		s += (double)(i % 7) * 0.5;
	return s;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank = 0;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	int slow = argc > 1 ? atoi(argv[1]) : 1;
	int steps = argc > 2 ? atoi(argv[2]) : 40;
	double total = 0;
	for (int k = 0; k < steps; k++) {
		double mine = compute(rank == slow ? 5000000 : 1000000), sum = 0;
		MPI_Allreduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		total += sum;
	}
	if (rank == 0)
		printf("%.0f\n", total);
	MPI_Finalize();
	return 0;
}
