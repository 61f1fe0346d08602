/* A stand-in for an MPI library that computes wrong results (tests only): loaded with
 * LD_PRELOAD, it wraps MPI_Allreduce (PMPI) and changes one element of rank 0's result for
 * every call of at least 2 MPI_INT elements. The suite's correctness check must fail, naming
 * the collective and the first wrong element, and the allreduce measurement with it.
 *   mpicc -shared -fPIC -o libcorrupt_allreduce.so corrupt_allreduce.c
 */
#include <mpi.h>

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                  MPI_Op op, MPI_Comm comm) {
    int rank, err = PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
    PMPI_Comm_rank(comm, &rank);
    if (err == MPI_SUCCESS && rank == 0 && count >= 2 && datatype == MPI_INT)
        ((int *)recvbuf)[1] += 1;
    return err;
}
