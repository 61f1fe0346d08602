/* collective_check MAX_BYTES NAME... : do the MPI library's collectives compute the right data?
 *
 * Part of the OMB regression suite (omb_suite.osu.correctness). Two builds of this file:
 *  - the program (as above);
 *  - with -DOMB_PRELOAD -shared -fPIC, a library loaded into the measured OSU program
 *    (LD_PRELOAD, by the rank wrapper): its MPI_Init / MPI_Init_thread call the next ones
 *    (a second preloaded library's, or the MPI library's) and then check what
 *    $OMB_COLLCHECK=MAX_BYTES,NAME,... names, so the launch that measures a collective has
 *    checked its results first, with no launch of its own. Nothing is measured meanwhile.
 *
 * One launch checks every named
 * collective (osu_allreduce, osu_bcast, osu_alltoall, osu_allgather, osu_reduce, osu_barrier,
 * osu_iallreduce, osu_gather, osu_scatter) for every message size OSU's sweep uses, from one
 * MPI_INT to MAX_BYTES per rank, twice each with new data, every element compared with what it
 * must be. The error counts travel to rank 0 by point-to-point messages, not by a collective
 * under test. Rank 0 prints, per collective,
 *
 *   COLLCHECK osu_allreduce ok sizes=4-1048576
 *   COLLCHECK osu_bcast wrong 3 elements at 65536 B (first: element 7 is 12, not 21)
 *
 * and a final "COLLCHECK done ranks=N", so a run that was cut off is told from one that
 * passed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STARTS 2

typedef struct { long bad; long index; int got; int want; } Errors;

static void note(Errors *e, long index, int got, int want) {
    if (got == want) return;
    if (e->bad++ == 0) { e->index = index; e->got = got; e->want = want; }
}

/* The value element i of rank r's send buffer holds in start s (towards peer p). */
static int val(int r, int p, long i, int s) { return (int)((r * 131 + p * 17 + i * 3 + s) % 100003); }

static Errors check(const char *name, long count, int rank, int size, int *send, int *recv) {
    Errors e = {0, 0, 0, 0};
    for (int s = 0; s < STARTS; s++) {
        if (!strcmp(name, "osu_allreduce") || !strcmp(name, "osu_iallreduce") ||
            !strcmp(name, "osu_reduce")) {
            for (long i = 0; i < count; i++) { send[i] = val(rank, 0, i, s); recv[i] = -1; }
            if (!strcmp(name, "osu_allreduce"))
                MPI_Allreduce(send, recv, (int)count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            else if (!strcmp(name, "osu_reduce"))
                MPI_Reduce(send, recv, (int)count, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
            else {
                MPI_Request req;
                MPI_Iallreduce(send, recv, (int)count, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
                MPI_Wait(&req, MPI_STATUS_IGNORE);
            }
            if (strcmp(name, "osu_reduce") || rank == 0)
                for (long i = 0; i < count; i++) {
                    int want = 0;
                    for (int r = 0; r < size; r++) want += val(r, 0, i, s);
                    note(&e, i, recv[i], want);
                }
        } else if (!strcmp(name, "osu_bcast")) {
            for (long i = 0; i < count; i++) recv[i] = rank == 0 ? val(0, 0, i, s) : -1;
            MPI_Bcast(recv, (int)count, MPI_INT, 0, MPI_COMM_WORLD);
            for (long i = 0; i < count; i++) note(&e, i, recv[i], val(0, 0, i, s));
        } else if (!strcmp(name, "osu_alltoall")) {
            for (int p = 0; p < size; p++)
                for (long i = 0; i < count; i++) {
                    send[p * count + i] = val(rank, p, i, s);
                    recv[p * count + i] = -1;
                }
            MPI_Alltoall(send, (int)count, MPI_INT, recv, (int)count, MPI_INT, MPI_COMM_WORLD);
            for (int p = 0; p < size; p++)
                for (long i = 0; i < count; i++)
                    note(&e, p * count + i, recv[p * count + i], val(p, rank, i, s));
        } else if (!strcmp(name, "osu_allgather") || !strcmp(name, "osu_gather")) {
            for (long i = 0; i < count; i++) send[i] = val(rank, 0, i, s);
            for (long i = 0; i < count * size; i++) recv[i] = -1;
            if (!strcmp(name, "osu_gather"))
                MPI_Gather(send, (int)count, MPI_INT, recv, (int)count, MPI_INT, 0,
                           MPI_COMM_WORLD);
            else
                MPI_Allgather(send, (int)count, MPI_INT, recv, (int)count, MPI_INT,
                              MPI_COMM_WORLD);
            if (strcmp(name, "osu_gather") || rank == 0)
                for (int p = 0; p < size; p++)
                    for (long i = 0; i < count; i++)
                        note(&e, p * count + i, recv[p * count + i], val(p, 0, i, s));
        } else if (!strcmp(name, "osu_scatter")) {
            for (long i = 0; i < count * size; i++) send[i] = rank == 0 ? val(0, 0, i, s) : -1;
            for (long i = 0; i < count; i++) recv[i] = -1;
            MPI_Scatter(send, (int)count, MPI_INT, recv, (int)count, MPI_INT, 0, MPI_COMM_WORLD);
            for (long i = 0; i < count; i++) note(&e, i, recv[i], val(0, 0, rank * count + i, s));
        } else if (!strcmp(name, "osu_barrier")) {
            MPI_Barrier(MPI_COMM_WORLD);
        } else {
            if (rank == 0) fprintf(stderr, "collective_check: unknown collective %s\n", name);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    return e;
}

/* Rank 0 learns every rank's errors by point-to-point messages. */
static Errors total(Errors mine, int rank, int size) {
    if (rank != 0) {
        MPI_Send(&mine, (int)sizeof mine, MPI_BYTE, 0, 7, MPI_COMM_WORLD);
        return mine;
    }
    Errors all = mine;
    for (int r = 1; r < size; r++) {
        Errors other;
        MPI_Recv(&other, (int)sizeof other, MPI_BYTE, r, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (other.bad && !all.bad) all = other; else all.bad += other.bad;
    }
    return all;
}

/* Elements per rank a buffer of this collective holds for count elements per message. */
static long held(const char *name, long count, int size) {
    int one = !strcmp(name, "osu_allreduce") || !strcmp(name, "osu_iallreduce") ||
              !strcmp(name, "osu_reduce") || !strcmp(name, "osu_bcast") ||
              !strcmp(name, "osu_barrier");
    return one ? count : count * size;
}

static void run_checks(long max_bytes, int names, char **name) {
    int rank, size;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0) {  /* which library ran: the environment's, or one PATH/LD_LIBRARY_PATH chose */
        char version[MPI_MAX_LIBRARY_VERSION_STRING];
        int length;
        MPI_Get_library_version(version, &length);
        version[strcspn(version, "\n")] = '\0';
        printf("COLLCHECK library %s\n", version);
    }
    long max_count = max_bytes / (long)sizeof(int);
    if (max_count < 1) max_count = 1;
    long most = 1;
    for (int c = 0; c < names; c++)
        if (held(name[c], max_count, size) > most) most = held(name[c], max_count, size);
    int *send = malloc(sizeof(int) * most);
    int *recv = malloc(sizeof(int) * most);
    if (!send || !recv) {
        fprintf(stderr, "collective_check: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    for (int c = 0; c < names; c++) {
        long count = 1, wrong_at = 0;
        Errors first = {0, 0, 0, 0};
        for (count = 1; count <= max_count; count *= 2) {
            Errors e = total(check(name[c], count, rank, size, send, recv), rank, size);
            if (e.bad && !first.bad) { first = e; wrong_at = count; }
        }
        if (rank == 0) {
            if (first.bad)
                printf("COLLCHECK %s wrong %ld elements at %ld B (first: element %ld is %d, "
                       "not %d)\n", name[c], first.bad, wrong_at * (long)sizeof(int),
                       first.index, first.got, first.want);
            else
                printf("COLLCHECK %s ok sizes=%ld-%ld\n", name[c], (long)sizeof(int),
                       (count / 2) * (long)sizeof(int));
            fflush(stdout);
        }
    }
    if (rank == 0) {
        printf("COLLCHECK done ranks=%d\n", size);
        fflush(stdout);
    }
    free(send);
    free(recv);
}

#ifdef OMB_PRELOAD
#define MAX_NAMES 16

/* $OMB_COLLCHECK = MAX_BYTES,NAME,...: what to check (commas: a job script exports it
 * unquoted); unset or empty: nothing. */
static void check_from_env(void) {
    const char *asked = getenv("OMB_COLLCHECK");
    if (!asked || !*asked) return;
    char text[1024], *name[MAX_NAMES], *save = NULL;
    snprintf(text, sizeof text, "%s", asked);
    char *max = strtok_r(text, ", ", &save);
    int names = 0;
    for (char *n; names < MAX_NAMES && (n = strtok_r(NULL, ", ", &save)) != NULL;)
        name[names++] = n;
    run_checks(atol(max), names, name);
}

typedef int (*init_fn)(int *, char ***);
typedef int (*init_thread_fn)(int *, char ***, int, int *);

int MPI_Init(int *argc, char ***argv) {
    init_fn next = (init_fn)dlsym(RTLD_NEXT, "MPI_Init");
    int err = next ? next(argc, argv) : PMPI_Init(argc, argv);
    if (err == MPI_SUCCESS) check_from_env();
    return err;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
    init_thread_fn next = (init_thread_fn)dlsym(RTLD_NEXT, "MPI_Init_thread");
    int err = next ? next(argc, argv, required, provided)
                   : PMPI_Init_thread(argc, argv, required, provided);
    if (err == MPI_SUCCESS) check_from_env();
    return err;
}
#else
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    if (argc < 3) {
        fprintf(stderr, "usage: collective_check MAX_BYTES NAME...\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    run_checks(atol(argv[1]), argc - 2, argv + 2);
    MPI_Finalize();
    return 0;
}
#endif
