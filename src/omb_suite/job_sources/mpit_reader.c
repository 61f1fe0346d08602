/*
 * mpit_reader: report which collective algorithms ran, from the MPI library's own MPI_T
 * performance-variable counters (MVAPICH2 built with --enable-mpit-pvars=mv2 counts every
 * call of every algorithm: mv2_coll_bcast_binomial, mv2_coll_allreduce_pt2pt_rd, ...).
 *
 * Built as a shared library and loaded into the benchmark with LD_PRELOAD. PMPI wrappers:
 *   MPI_Init / MPI_Init_thread  start an MPI_T session and a handle on every counter-class
 *                               pvar whose name matches $OMB_MPIT_MATCH (POSIX extended
 *                               regex, default "coll"); counters that are not continuous
 *                               are started here (reading a never-started one is an error).
 *   MPI_Finalize                reads them, gathers to rank 0, which prints in rank order
 *     MPIT rank=<r> name=<pvar>[<i>] value=<n>           one line per non-zero counter element
 *     MPIT done rank=<r> size=<n> pvars=<all> matched=<m> read=<k> failed=<f> nonzero=<z>
 *   A missing "done" line means the output was cut. A library without such pvars prints
 *   only done lines with matched=0: no evidence, not proof.
 * Reading happens before the gather, so the gather is not counted.
 */
#include <mpi.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME_LEN 256
#define MAX_TEXT (1 << 20) /* per rank; longer output is cut and says so */

struct counter {
    int index;
    char name[NAME_LEN];
    MPI_Datatype type;
    int count;
    MPI_T_pvar_handle handle;
};

static MPI_T_pvar_session session;
static struct counter *counters;
static int num_pvars, num_counters, mpit_up, session_open;

static const char *match_pattern(void) {
    const char *env = getenv("OMB_MPIT_MATCH");
    return env && *env ? env : "coll";
}

static void open_counters(void) {
    int provided;
    regex_t pattern;
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) return;
    mpit_up = 1;
    if (regcomp(&pattern, match_pattern(), REG_EXTENDED | REG_NOSUB) != 0) {
        fprintf(stderr, "mpit_reader: OMB_MPIT_MATCH is not a valid regex: %s\n",
                match_pattern());
        return;
    }
    if (MPI_T_pvar_get_num(&num_pvars) != MPI_SUCCESS ||
        MPI_T_pvar_session_create(&session) != MPI_SUCCESS) {
        num_pvars = 0;
        regfree(&pattern);
        return;
    }
    session_open = 1;
    counters = calloc(num_pvars > 0 ? (size_t)num_pvars : 1, sizeof *counters);
    for (int i = 0; i < num_pvars; i++) {
        struct counter *c = &counters[num_counters];
        char desc[8];
        int name_len = NAME_LEN, desc_len = sizeof desc, verbosity, var_class, bind;
        int readonly, continuous, atomic;
        MPI_T_enum enumtype;
        if (MPI_T_pvar_get_info(i, c->name, &name_len, &verbosity, &var_class, &c->type,
                                &enumtype, desc, &desc_len, &bind, &readonly, &continuous,
                                &atomic) != MPI_SUCCESS)
            continue;
        if (var_class != MPI_T_PVAR_CLASS_COUNTER || bind != MPI_T_BIND_NO_OBJECT ||
            regexec(&pattern, c->name, 0, NULL, 0) != 0)
            continue;
        if (MPI_T_pvar_handle_alloc(session, i, NULL, &c->handle, &c->count) != MPI_SUCCESS)
            continue;
        if (!continuous && MPI_T_pvar_start(session, c->handle) != MPI_SUCCESS) continue;
        c->index = i;
        num_counters++;
    }
    regfree(&pattern);
}

/* Element i of a counter buffer as an unsigned number (counters are integers). */
static unsigned long long element(const void *buf, MPI_Datatype type, int i) {
    if (type == MPI_UNSIGNED) return ((const unsigned *)buf)[i];
    if (type == MPI_UNSIGNED_LONG) return ((const unsigned long *)buf)[i];
    if (type == MPI_UNSIGNED_LONG_LONG) return ((const unsigned long long *)buf)[i];
    if (type == MPI_COUNT) return (unsigned long long)((const MPI_Count *)buf)[i];
    if (type == MPI_INT) return (unsigned long long)((const int *)buf)[i];
    if (type == MPI_DOUBLE) return (unsigned long long)((const double *)buf)[i];
    return 0;
}

static size_t append(char *text, size_t used, const char *line) {
    size_t len = strlen(line);
    if (used + len + 1 >= MAX_TEXT) return used;
    memcpy(text + used, line, len + 1);
    return used + len;
}

/* This rank's lines: one per non-zero counter element, then the done line. */
static char *read_counters(int rank, int size) {
    char *text = malloc(MAX_TEXT), line[NAME_LEN + 128];
    size_t used = 0;
    int read = 0, failed = 0, nonzero = 0;
    text[0] = '\0';
    for (int k = 0; k < num_counters; k++) {
        struct counter *c = &counters[k];
        unsigned long long buf[c->count > 0 ? c->count : 1]; /* widest integer type */
        if (MPI_T_pvar_read(session, c->handle, buf) != MPI_SUCCESS) {
            failed++;
            continue;
        }
        read++;
        for (int i = 0; i < c->count; i++) {
            unsigned long long value = element(buf, c->type, i);
            if (value == 0) continue;
            nonzero++;
            if (c->count == 1)
                snprintf(line, sizeof line, "MPIT rank=%d name=%s value=%llu\n", rank, c->name,
                         value);
            else
                snprintf(line, sizeof line, "MPIT rank=%d name=%s[%d] value=%llu\n", rank,
                         c->name, i, value);
            used = append(text, used, line);
        }
    }
    snprintf(line, sizeof line,
             "MPIT done rank=%d size=%d pvars=%d matched=%d read=%d failed=%d nonzero=%d\n",
             rank, size, num_pvars, num_counters, read, failed, nonzero);
    append(text, used, line);
    return text;
}

static void print_gathered(char *mine, int rank, int size) {
    int len = (int)strlen(mine) + 1, *lens = NULL, *offsets = NULL;
    char *all = NULL;
    if (rank == 0) {
        lens = malloc(sizeof(int) * (size_t)size);
        offsets = malloc(sizeof(int) * (size_t)size);
    }
    PMPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        int total = 0;
        for (int r = 0; r < size; r++) {
            offsets[r] = total;
            total += lens[r];
        }
        all = malloc((size_t)total);
    }
    PMPI_Gatherv(mine, len, MPI_CHAR, all, lens, offsets, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        for (int r = 0; r < size; r++) fputs(all + offsets[r], stdout);
        fflush(stdout);
        free(all);
        free(lens);
        free(offsets);
    }
}

int MPI_Init(int *argc, char ***argv) {
    int err = PMPI_Init(argc, argv);
    if (err == MPI_SUCCESS) open_counters();
    return err;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
    int err = PMPI_Init_thread(argc, argv, required, provided);
    if (err == MPI_SUCCESS) open_counters();
    return err;
}

int MPI_Finalize(void) {
    int rank, size;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    char *mine = read_counters(rank, size);
    print_gathered(mine, rank, size);
    free(mine);
    if (session_open) {
        for (int k = 0; k < num_counters; k++)
            MPI_T_pvar_handle_free(session, &counters[k].handle);
        MPI_T_pvar_session_free(&session);
    }
    if (mpit_up) MPI_T_finalize();
    free(counters);
    return PMPI_Finalize();
}
