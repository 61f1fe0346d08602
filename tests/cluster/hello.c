/* MPI hello for the mini-cluster tests: one line per rank with the rank, the world size, the
 * host name (the node) and the CPUs the rank may run on (sched_getaffinity), so a test can
 * check where the ranks landed and whether they were bound. */
#define _GNU_SOURCE
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, size, cpu, n = 0;
    char host[256], cpus[1024] = "";
    cpu_set_t set;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    gethostname(host, sizeof host);
    sched_getaffinity(0, sizeof set, &set);
    for (cpu = 0; cpu < CPU_SETSIZE && n < (int)sizeof cpus - 8; cpu++)
        if (CPU_ISSET(cpu, &set))
            n += snprintf(cpus + n, sizeof cpus - n, n ? ",%d" : "%d", cpu);
    /* A barrier makes every rank talk to the others before it reports. */
    MPI_Barrier(MPI_COMM_WORLD);
    printf("rank %d of %d on %s cpus %s\n", rank, size, host, cpus);
    MPI_Finalize();
    return 0;
}
