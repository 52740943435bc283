/* util/mem.c: the memory this node lets the job use (see mem.h). */
#include "util/mem.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util/knobs.h"

/* A limit at or above this is "no limit" (cgroup v1 writes 2^63 rounded down to a page). */
#define NO_LIMIT ((uint64_t)1 << 62)

const char *util_mem_source_name(enum util_mem_source s)
{
    static const char *const names[UTIL_MEM_SOURCE_COUNT] = {"physical memory", "cgroup limit",
                                                             "Slurm allocation"};
    return (unsigned)s < UTIL_MEM_SOURCE_COUNT ? names[s] : "?";
}

/* The number in file @path ("max" or unreadable: 0). */
static uint64_t read_limit(const char *path)
{
    FILE *f = fopen(path, "re");
    uint64_t v = 0;
    if (f != NULL) {
        if (fscanf(f, "%" SCNu64, &v) != 1) {
            v = 0;
        }
        fclose(f);
    }
    return v > 0 && v < NO_LIMIT ? v : 0;
}

/* The smaller of two limits, 0 meaning none. */
static uint64_t tighter(uint64_t a, uint64_t b)
{
    return a == 0 ? b : b == 0 ? a : a < b ? a : b;
}

/*
 * The memory limit of this process's control group: cgroup v2 ("0::PATH" in /proc/self/cgroup,
 * memory.max of PATH and each parent) or v1 (the "memory" hierarchy's memory.limit_in_bytes).
 * A group namespace may show the group as the mount's root, which is read too. 0: none.
 */
static uint64_t cgroup_limit(void)
{
    FILE *f = fopen("/proc/self/cgroup", "re");
    char line[4096], path[4096 + 64];
    uint64_t limit = 0;
    while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
        line[strcspn(line, "\n")] = '\0';
        char *rel = NULL;
        const char *root = NULL, *file = NULL;
        if (strncmp(line, "0::", 3) == 0) {
            rel = line + 3;
            root = "/sys/fs/cgroup";
            file = "memory.max";
        } else {
            char *ctl = strchr(line, ':');
            char *colon = ctl != NULL ? strchr(ctl + 1, ':') : NULL;
            if (colon != NULL && (size_t)(colon - ctl - 1) == 6 && strncmp(ctl + 1, "memory", 6) == 0) {
                rel = colon + 1;
                root = "/sys/fs/cgroup/memory";
                file = "memory.limit_in_bytes";
            }
        }
        if (rel == NULL) {
            continue;
        }
        /* The group and every parent up to the root: the tightest holds. */
        for (;;) {
            (void)snprintf(path, sizeof(path), "%s%s/%s", root, rel, file);
            limit = tighter(limit, read_limit(path));
            char *slash = strrchr(rel, '/');
            if (slash == NULL || rel[0] == '\0') {
                break;
            }
            *slash = '\0';
        }
    }
    if (f != NULL) {
        fclose(f);
    }
    return limit;
}

/* Slurm's memory for this job on this node: --mem, or --mem-per-cpu times its CPUs here. */
static uint64_t slurm_limit(void)
{
    const uint64_t mib = (uint64_t)1 << 20;
    if (util_knob(UTIL_KNOB_SLURM_MEM_NODE)->valid) {
        return util_knob_u64(UTIL_KNOB_SLURM_MEM_NODE) * mib;
    }
    if (util_knob(UTIL_KNOB_SLURM_MEM_CPU)->valid && util_knob(UTIL_KNOB_SLURM_CPUS_NODE)->valid) {
        return util_knob_u64(UTIL_KNOB_SLURM_MEM_CPU) * mib *
               util_knob_u64(UTIL_KNOB_SLURM_CPUS_NODE);
    }
    return 0;
}

uint64_t util_node_memory(enum util_mem_source *source)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    uint64_t mem = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
    enum util_mem_source from = UTIL_MEM_PHYSICAL;
    uint64_t cg = cgroup_limit(), sl = slurm_limit();
    if (cg != 0 && (mem == 0 || cg < mem)) {
        mem = cg;
        from = UTIL_MEM_CGROUP;
    }
    if (sl != 0 && (mem == 0 || sl < mem)) {
        mem = sl;
        from = UTIL_MEM_SLURM;
    }
    if (source != NULL) {
        *source = from;
    }
    return mem;
}
