/* Does the MPI library's MPI-4 persistent collectives compute the right data?
 * Our own check (not OSU's): 5 starts of MPI_{Allreduce,Allgather,Gather,Scatter}_init, each
 * with new send data, every received element compared with what it must be. Prints one line
 * per collective: "<name> ok" or "<name> wrong <count> of <total>". Used by
 * tests/mpi/test_algorithms.py to keep the `defects:` entries of data/algorithms/*.yaml true.
 *   mpicc -o persistent_collectives persistent_collectives.c && mpirun -np 2 ./a.out
 */
#include <mpi.h>
#include <stdio.h>

#define N 4
#define STARTS 5

static void report(const char *name, int bad, int total, int rank) {
    int all = 0;
    MPI_Reduce(&bad, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        if (all) printf("%s wrong %d of %d\n", name, all, total);
        else printf("%s ok\n", name);
    }
}

int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int send[N * 64], recv[N * 64], bad;
    MPI_Request req;

    MPI_Allreduce_init(send, recv, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
    bad = 0;
    for (int it = 0; it < STARTS; it++) {
        for (int k = 0; k < N; k++) { send[k] = (rank + 1) * (it + 1) + k; recv[k] = -1; }
        MPI_Start(&req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        for (int k = 0; k < N; k++) {
            int want = 0;
            for (int p = 0; p < size; p++) want += (p + 1) * (it + 1) + k;
            bad += recv[k] != want;
        }
    }
    MPI_Request_free(&req);
    report("allreduce", bad, STARTS * N * size, rank);

    MPI_Allgather_init(send, N, MPI_INT, recv, N, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
    bad = 0;
    for (int it = 0; it < STARTS; it++) {
        for (int k = 0; k < N; k++) send[k] = rank * 100 + it * 10 + k;
        for (int k = 0; k < N * size; k++) recv[k] = -1;
        MPI_Start(&req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        for (int p = 0; p < size; p++)
            for (int k = 0; k < N; k++) bad += recv[p * N + k] != p * 100 + it * 10 + k;
    }
    MPI_Request_free(&req);
    report("allgather", bad, STARTS * N * size * size, rank);

    MPI_Gather_init(send, N, MPI_INT, recv, N, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
    bad = 0;
    for (int it = 0; it < STARTS; it++) {
        for (int k = 0; k < N; k++) send[k] = rank * 100 + it * 10 + k;
        for (int k = 0; k < N * size; k++) recv[k] = -1;
        MPI_Start(&req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        if (rank == 0)
            for (int p = 0; p < size; p++)
                for (int k = 0; k < N; k++) bad += recv[p * N + k] != p * 100 + it * 10 + k;
    }
    MPI_Request_free(&req);
    report("gather", bad, STARTS * N * size, rank);

    MPI_Scatter_init(send, N, MPI_INT, recv, N, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
    bad = 0;
    for (int it = 0; it < STARTS; it++) {
        for (int k = 0; k < N * size; k++) send[k] = it * 1000 + k;
        for (int k = 0; k < N; k++) recv[k] = -1;
        MPI_Start(&req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        for (int k = 0; k < N; k++) bad += recv[k] != it * 1000 + rank * N + k;
    }
    MPI_Request_free(&req);
    report("scatter", bad, STARTS * N * size, rank);

    MPI_Finalize();
    return 0;
}
