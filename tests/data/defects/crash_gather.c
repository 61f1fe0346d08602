/* A stand-in for an MPI library whose ranks crash after MPI_Init (tests only): loaded with
 * LD_PRELOAD, its MPI_Gather writes through a null pointer, a real SIGSEGV in every rank
 * that calls it (the placement probe gathers its lines, so it dies before printing). No MPI
 * header or library: the launcher and compilers it is preloaded into never call it.
 *   cc -shared -fPIC -o libcrash_gather.so crash_gather.c
 */
int MPI_Gather(const void *sendbuf, int sendcount, void *sendtype, void *recvbuf,
               int recvcount, void *recvtype, int root, void *comm) {
    (void)sendbuf, (void)sendcount, (void)sendtype, (void)recvbuf, (void)recvcount;
    (void)recvtype, (void)root, (void)comm;
    *(volatile int *)0 = 1;
    return 0;
}
