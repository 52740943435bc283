/*
 * bench/env.c: the machine description at the top of every results file (see bench.h).
 *
 * Figures a reader needs to judge a number: when, which commit, which CPU and how many cores,
 * how much memory, which MPI and compiler, how many ranks and threads, and whether the ranks
 * were oversubscribed (more ranks x threads on a node than it has cores: then times include
 * waiting for a core, and a benchmark measures the scheduler as much as the code).
 */
#include "bench/bench.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sort/sortex.h"
#include "util/alloc.h"
#include "util/cpu.h"
#include "util/util.h"

/* Copies the value of the first "key<spaces>: value" line of a /proc-style file into buf (the
 * whole key: "model" does not match "model name"). */
static void read_field(const char *path, const char *key, char *buf, size_t cap)
{
    char line[512];
    size_t klen = strlen(key);
    FILE *f = fopen(path, "r");
    (void)snprintf(buf, cap, "unknown");
    if (f == NULL) {
        return;
    }
    while (fgets(line, sizeof(line), f) != NULL) {
        if (strncmp(line, key, klen) != 0 || strchr(" \t:", line[klen]) == NULL) {
            continue;
        }
        char *v = strchr(line + klen, ':');
        if (v == NULL) {
            continue;
        }
        v += strspn(v + 1, " \t") + 1;
        v[strcspn(v, "\n")] = '\0';
        (void)snprintf(buf, cap, "%s", v);
        break;
    }
    fclose(f);
}

/* The selected word of a kernel setting such as "always [madvise] never". */
static void read_bracketed(const char *path, char *buf, size_t cap)
{
    char line[256] = "";
    FILE *f = fopen(path, "r");
    (void)snprintf(buf, cap, "unknown");
    if (f == NULL) {
        return;
    }
    if (fgets(line, sizeof(line), f) != NULL) {
        char *a = strchr(line, '['), *b = a ? strchr(a, ']') : NULL;
        if (a != NULL && b != NULL) {
            *b = '\0';
            (void)snprintf(buf, cap, "%s", a + 1);
        }
    }
    fclose(f);
}

/* The first line of a small file, without its newline; "" when unreadable. */
static void read_line(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "r");
    buf[0] = '\0';
    if (f != NULL) {
        if (fgets(buf, (int)cap, f) == NULL) {
            buf[0] = '\0';
        }
        buf[strcspn(buf, "\n")] = '\0';
        fclose(f);
    }
}

/* A size as /sys writes it ("48K", "32768K") for people: "48 KiB", "32 MiB". */
static void human_size(const char *sys, char *buf, size_t cap)
{
    char *end = NULL;
    unsigned long long v = strtoull(sys, &end, 10);
    v *= (end && *end == 'K') ? 1024ULL : (end && *end == 'M') ? 1048576ULL : 1ULL;
    if (v >= 1048576ULL && v % 1048576ULL == 0) {
        (void)snprintf(buf, cap, "%llu MiB", v / 1048576ULL);
    } else if (v >= 1024ULL && v % 1024ULL == 0) {
        (void)snprintf(buf, cap, "%llu KiB", v / 1024ULL);
    } else {
        (void)snprintf(buf, cap, "%llu B", v);
    }
}

/*
 * Every cache level of CPU 0 as the kernel reads it from CPUID (/sys/devices/system/cpu/cpu0/
 * cache/index*): "L1d 48 KiB, L1i 32 KiB, L2 1 MiB, L3 32 MiB shared by CPUs 0-1". glibc's
 * sysconf() takes AMD's L3 from an older CPUID field that some hypervisors fill with the whole
 * host's figure (384 MiB read on a VM whose L3 is 32 MiB), so it is used only without /sys.
 */
static void cache_levels(char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < 16 && used < cap; i++) {
        char path[128], level[16], type[32], size[32], shared[64], human[32];
        (void)snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
        read_line(path, level, sizeof(level));
        if (level[0] == '\0') {
            break;
        }
        (void)snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
        read_line(path, type, sizeof(type));
        (void)snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        read_line(path, size, sizeof(size));
        (void)snprintf(path, sizeof(path),
                       "/sys/devices/system/cpu/cpu0/cache/index%d/shared_cpu_list", i);
        read_line(path, shared, sizeof(shared));
        human_size(size, human, sizeof(human));
        const char *kind = strcmp(type, "Data") == 0          ? "d"
                           : strcmp(type, "Instruction") == 0 ? "i"
                                                              : "";
        /* A cache shared by several CPUs says by which (a list with a '-' or a ','). */
        int many = strpbrk(shared, "-,") != NULL;
        used += (size_t)snprintf(buf + used, cap - used, "%sL%s%s %s%s%s", used ? ", " : "", level,
                                 kind, human, many ? " shared by CPUs " : "", many ? shared : "");
    }
    if (buf[0] == '\0') {
        const struct util_caches *c = util_caches();
        (void)snprintf(buf, cap, "L1d %zu KiB, L2 %zu KiB, L3 %zu KiB (sysconf; no /sys)",
                       c->l1d / 1024, c->l2 / 1024, c->l3 / 1024);
    }
}

/*
 * The Open MPI settings this rank was started with: every OMPI_MCA_* variable but the ones
 * mpirun sets for its own wiring (orte_*, ess*, pmix*, ...), "name=value" separated by spaces,
 * sorted, "none" when there are none. mpirun's --mca flags arrive here this way too.
 */
static void mca_settings(char *buf, size_t cap)
{
    static const char *const wiring[] = {"orte_",        "ess",           "pmix",
                                         "initial_wdir", "shmem_RUNTIME", NULL};
    const char *names[128];
    int n = 0;
    for (char **e = environ; *e != NULL && n < 128; e++) {
        if (strncmp(*e, "OMPI_MCA_", 9) != 0) {
            continue;
        }
        int skip = 0;
        for (int w = 0; wiring[w] != NULL; w++) {
            skip |= strncmp(*e + 9, wiring[w], strlen(wiring[w])) == 0;
        }
        if (!skip) {
            names[n++] = *e + 9;
        }
    }
    /* Insertion sort: a handful of names. */
    for (int i = 1; i < n; i++) {
        for (int j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            const char *t = names[j];
            names[j] = names[j - 1];
            names[j - 1] = t;
        }
    }
    size_t used = 0;
    (void)snprintf(buf, cap, "none");
    for (int i = 0; i < n && used < cap; i++) {
        used += (size_t)snprintf(buf + used, cap - used, "%s%s", i ? " " : "", names[i]);
    }
}

static void mpi_library(char *buf, size_t cap)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int len = 0;
    MPI_Get_library_version(lib, &len);
    lib[strcspn(lib, ",\n")] = '\0';
    (void)snprintf(buf, cap, "%s", lib);
}

/* What the ranks find out together, for rank 0 to print. */
struct env_ranks {
    int rank, size;
    long cores;  /* this node's online cores */
    int sums[3]; /* nodes, the most ranks on one node, whether any node runs more threads than
                  * cores */
    char host[MPI_MAX_PROCESSOR_NAME];
};

/* The collective part, on every rank: the ranks, the nodes and this rank's host name. */
static void env_gather(MPI_Comm comm, int threads, struct env_ranks *r)
{
    int node_rank, node_size;
    MPI_Comm node;
    /* Ranks sharing memory form a node: the unit for "ranks per node" and oversubscription. */
    MPI_Comm_rank(comm, &r->rank);
    MPI_Comm_size(comm, &r->size);
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, r->rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &node_rank);
    MPI_Comm_size(node, &node_size);
    MPI_Comm_free(&node);

    /* Nodes, the most ranks on one node, and whether any node runs more threads than cores. */
    r->cores = sysconf(_SC_NPROCESSORS_ONLN);
    int figures[3] = {node_rank == 0, node_size, (long)node_size * threads > r->cores};
    MPI_Allreduce(figures, r->sums, 1, MPI_INT, MPI_SUM, comm);
    MPI_Allreduce(figures + 1, r->sums + 1, 2, MPI_INT, MPI_MAX, comm);
    int hlen = 0;
    MPI_Get_processor_name(r->host, &hlen);
}

/* What ran, when, from which commit, on what hardware and software. Rank 0 describes its own
 * node; on a cluster the nodes are assumed alike. */
static void env_machine(FILE *out, const char *suite, const struct env_ranks *r)
{
    char date[64], cpu[256], family[32], model[32], stepping[32], caches[512], mca[2048];
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm);
    read_field("/proc/cpuinfo", "model name", cpu, sizeof(cpu));
    read_field("/proc/cpuinfo", "cpu family", family, sizeof(family));
    read_field("/proc/cpuinfo", "model", model, sizeof(model));
    read_field("/proc/cpuinfo", "stepping", stepping, sizeof(stepping));
    cache_levels(caches, sizeof(caches));
    mca_settings(mca, sizeof(mca));
    mpi_library(lib, sizeof(lib));
    double mem = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);

    fprintf(out, "# suite: %s\n", suite);
    fprintf(out, "# program: %s %s\n", util_progname(), sortex_version());
    fprintf(out, "# date: %s\n", date);
    fprintf(out, "# commit: %s\n", util_commit());
    fprintf(out, "# host: %s\n", r->host);
    fprintf(out, "# nodes: %d\n", r->sums[0]);
    fprintf(out, "# cpu: %s\n", cpu);
    fprintf(out, "# cpu_family: %s\n", family);
    fprintf(out, "# cpu_model: %s\n", model);
    fprintf(out, "# cpu_stepping: %s\n", stepping);
    fprintf(out, "# caches: %s\n", caches);
    fprintf(out, "# cores: %ld\n", r->cores);
    fprintf(out, "# memory_gib: %.1f\n", mem / (1024.0 * 1024.0 * 1024.0));
    fprintf(out, "# mpi: %s\n", lib);
    fprintf(out, "# mca: %s\n", mca);
}

/* The compiler, the build's flags and the allocator. */
static void env_build(FILE *out)
{
#if defined(__clang__)
    fprintf(out, "# compiler: clang %s\n", __clang_version__);
#elif defined(__GNUC__)
    fprintf(out, "# compiler: gcc %s\n", __VERSION__);
#else
    fprintf(out, "# compiler: unknown\n");
#endif
    /* What the binary can tell about its own flags (the driver adds the exact ones as a note). */
    fprintf(out, "# build: %s, %s, OpenMP %d%s%s\n",
#ifdef __OPTIMIZE__
            "optimized",
#else
            "not optimized",
#endif
#ifdef NDEBUG
            "NDEBUG",
#else
            "assertions on",
#endif
            _OPENMP,
#if defined(__SANITIZE_ADDRESS__)
            ", AddressSanitizer",
#else
            "",
#endif
#ifdef __AVX2__
            ", AVX2 code (-march beyond x86-64)"
#else
            ""
#endif
    );
    fprintf(out, "# allocator: %s\n", util_allocator_name());
}

/* How it ran: ranks, threads, and whether they had a core each; transparent huge pages, and
 * the load as the run started. */
static void env_run(FILE *out, const struct env_ranks *r, int threads)
{
    char thp[64];
    read_bracketed("/sys/kernel/mm/transparent_hugepage/enabled", thp, sizeof(thp));
    fprintf(out, "# P: %d\n", r->size);
    fprintf(out, "# threads: %d\n", threads);
    fprintf(out, "# ranks_per_node: %d\n", r->sums[1]);
    fprintf(out, "# oversubscribed: %s\n", r->sums[2] ? "yes" : "no");
    fprintf(out, "# thp: %s\n", thp);
    /* How busy the machine was as the run started: runnable tasks per core, averaged. */
    double load[1] = {-1};
    if (getloadavg(load, 1) == 1) {
        fprintf(out, "# loadavg: %.2f\n", load[0]);
    }
}

/* The caller's notes (the driver adds its exact compiler flags and launcher), then argv. */
static void env_command(FILE *out, int argc, char **argv, const char *const *notes, int nnotes)
{
    for (int i = 0; i < nnotes; i++) {
        const char *eq = strchr(notes[i], '=');
        if (eq != NULL) {
            fprintf(out, "# %.*s: %s\n", (int)(eq - notes[i]), notes[i], eq + 1);
        }
    }
    fprintf(out, "# command:");
    for (int i = 0; i < argc; i++) {
        fprintf(out, " %s", argv[i]);
    }
    fputc('\n', out);
}

void bench_env_print(FILE *out, MPI_Comm comm, const char *suite, int threads, int argc,
                     char **argv, const char *const *notes, int nnotes)
{
    struct env_ranks r = {0};
    env_gather(comm, threads, &r);
    if (r.rank != 0) {
        return;
    }
    env_machine(out, suite, &r);
    env_build(out);
    env_run(out, &r, threads);
    env_command(out, argc, argv, notes, nnotes);
}
