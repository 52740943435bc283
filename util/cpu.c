/* util/cpu.c: the CPU model and cache sizes, read at run time (see cpu.h). */
#include "util/cpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/knobs.h"
#include "util/util.h"

/* Size in bytes of "48K" / "1024K" / "32M" as /sys writes it, 0 when unreadable. */
static size_t sys_size(int index, int *level, char *type, size_t cap)
{
    char path[128], buf[64] = "";
    FILE *f;
    size_t v = 0;
    (void)snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/level", index);
    if ((f = fopen(path, "r")) == NULL) {
        return 0;
    }
    *level = fscanf(f, "%d", level) == 1 ? *level : 0;
    fclose(f);
    (void)snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/type", index);
    if ((f = fopen(path, "r")) != NULL) {
        if (fgets(type, (int)cap, f) == NULL) {
            type[0] = '\0';
        }
        type[strcspn(type, "\n")] = '\0';
        fclose(f);
    }
    (void)snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/size", index);
    if ((f = fopen(path, "r")) != NULL) {
        if (fgets(buf, sizeof(buf), f) != NULL) {
            char *end = NULL;
            v = strtoull(buf, &end, 10);
            v *= (end && *end == 'K') ? 1024 : (end && *end == 'M') ? 1048576 : 1;
        }
        fclose(f);
    }
    return v;
}

/* A positive sysconf() value, else 0. */
static size_t conf(int name)
{
    long v = sysconf(name);
    return v > 0 ? (size_t)v : 0;
}

const struct util_caches *util_caches(void)
{
    static struct util_caches c;
    static int done;
    if (done) {
        return &c;
    }
    /* The kernel's reading first (CPUID leaf 4 or 0x8000001D, per cache): glibc's sysconf()
     * takes AMD's L3 from an older CPUID field that some hypervisors fill with the whole
     * host's figure (384 MiB and 508 MiB read on a VM whose L3 is 32 MiB). */
    for (int i = 0; i < 8; i++) {
        int level = 0;
        char type[32] = "";
        size_t v = sys_size(i, &level, type, sizeof(type));
        if (level == 1 && strcmp(type, "Instruction") != 0 && c.l1d == 0) {
            c.l1d = v;
        } else if (level == 2 && c.l2 == 0) {
            c.l2 = v;
        } else if (level == 3 && c.l3 == 0) {
            c.l3 = v;
        }
    }
    /* Where the kernel cannot tell (no /sys, as in some containers), glibc's. */
    c.l1d = c.l1d ? c.l1d : conf(_SC_LEVEL1_DCACHE_SIZE);
    c.l2 = c.l2 ? c.l2 : conf(_SC_LEVEL2_CACHE_SIZE);
    c.l3 = c.l3 ? c.l3 : conf(_SC_LEVEL3_CACHE_SIZE);
    c.line = conf(_SC_LEVEL1_DCACHE_LINESIZE);
    c.line = c.line ? c.line : 64;
    if (util_knob(UTIL_KNOB_L1D_BYTES)->valid) {
        c.l1d = (size_t)util_knob_u64(UTIL_KNOB_L1D_BYTES);
    }
    if (util_knob(UTIL_KNOB_L2_BYTES)->valid) {
        c.l2 = (size_t)util_knob_u64(UTIL_KNOB_L2_BYTES);
    }
    done = 1;
    return &c;
}

const char *util_cpu_model(void)
{
    static char model[128];
    if (model[0] != '\0') {
        return model;
    }
    (void)snprintf(model, sizeof(model), "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
        if (strncmp(line, "model name", 10) == 0) {
            char *v = strchr(line, ':');
            if (v != NULL) {
                v += strspn(v + 1, " \t") + 1;
                v[strcspn(v, "\n")] = '\0';
                (void)snprintf(model, sizeof(model), "%s", v);
            }
            break;
        }
    }
    if (f != NULL) {
        fclose(f);
    }
    return model;
}

/* A cache size for people: "48 KiB", "unknown". */
static void kib(char *buf, size_t cap, size_t bytes)
{
    if (bytes == 0) {
        (void)snprintf(buf, cap, "unknown");
    } else {
        (void)snprintf(buf, cap, "%zu KiB", bytes / 1024);
    }
}

const char *util_cpu_describe(void)
{
    static char line[384];
    const struct util_caches *c = util_caches();
    char l1[32], l2[32], l3[32];
    kib(l1, sizeof(l1), c->l1d);
    kib(l2, sizeof(l2), c->l2);
    kib(l3, sizeof(l3), c->l3);
    const char *simd = "";
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")) {
        simd = "; avx2 avx512";
    } else if (__builtin_cpu_supports("avx2")) {
        simd = "; avx2";
    } else {
        simd = "; sse2";
    }
#endif
    (void)snprintf(line, sizeof(line), "%s; %ld CPUs; L1d %s, L2 %s, L3 %s%s", util_cpu_model(),
                   sysconf(_SC_NPROCESSORS_ONLN), l1, l2, l3, simd);
    return line;
}
