/*
 * placement_probe: print where every MPI rank runs.
 *
 * One line per rank, gathered and printed by rank 0 in rank order:
 *   PROBE rank=<r> size=<n> host=<hostname> cpus=<list> sockets=<list> numa=<list>
 * cpus is the sched_getaffinity() set; sockets and numa are read from sysfs for
 * those CPUs. The OMB suite runs this with the same launcher options as the
 * benchmark and compares the result with the placement it asked for.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>

#define LINE 4096
#define MAXID 1024

static void append_list(char *out, size_t len, const int *set, int n) {
    /* Compact "0-3,8,10-11" form of a sorted membership array. */
    int first = 1;
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        if (!set[i]) continue;
        int j = i;
        while (j + 1 < n && set[j + 1]) j++;
        char item[32];
        if (j > i) snprintf(item, sizeof item, "%s%d-%d", first ? "" : ",", i, j);
        else snprintf(item, sizeof item, "%s%d", first ? "" : ",", i);
        strncat(out, item, len - strlen(out) - 1);
        first = 0;
        i = j;
    }
    if (first) strncat(out, "none", len - 1);
}

static int read_int(const char *path) {
    FILE *f = fopen(path, "r");
    int v = -1;
    if (f) {
        if (fscanf(f, "%d", &v) != 1) v = -1;
        fclose(f);
    }
    return v;
}

static int numa_of_cpu(int cpu) {
    char path[256];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d", cpu);
    DIR *d = opendir(path);
    int node = -1;
    if (!d) return -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "node", 4) == 0 && e->d_name[4] >= '0' && e->d_name[4] <= '9') {
            node = atoi(e->d_name + 4);
            break;
        }
    }
    closedir(d);
    return node;
}

int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    static int cpus[MAXID], sockets[MAXID], numa[MAXID];
    cpu_set_t mask;
    CPU_ZERO(&mask);
    if (sched_getaffinity(0, sizeof mask, &mask) != 0) perror("sched_getaffinity");
    for (int c = 0; c < MAXID && c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, &mask)) continue;
        char path[256];
        cpus[c] = 1;
        snprintf(path, sizeof path,
                 "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", c);
        int s = read_int(path);
        if (s >= 0 && s < MAXID) sockets[s] = 1;
        int n = numa_of_cpu(c);
        if (n >= 0 && n < MAXID) numa[n] = 1;
    }

    char host[256] = "unknown";
    gethostname(host, sizeof host);
    char cl[LINE / 2], sl[256], nl[256], line[LINE];
    append_list(cl, sizeof cl, cpus, MAXID);
    append_list(sl, sizeof sl, sockets, MAXID);
    append_list(nl, sizeof nl, numa, MAXID);
    snprintf(line, sizeof line, "PROBE rank=%d size=%d host=%s cpus=%s sockets=%s numa=%s",
             rank, size, host, cl, sl, nl);

    char *all = NULL;
    if (rank == 0) all = malloc((size_t)size * LINE);
    MPI_Gather(line, LINE, MPI_CHAR, all, LINE, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        for (int r = 0; r < size; r++) printf("%s\n", all + (size_t)r * LINE);
        printf("PROBE done ranks=%d\n", size);
        fflush(stdout);
        free(all);
    }
    MPI_Finalize();
    return 0;
}
