/*
 * util/mem.h: how much memory this node lets the job use.
 *
 * The external sort decides between sorting in memory and sorting through temporary files by
 * the memory a rank may use. Unless the user says (--mem-limit), that is a share of what the
 * node has for the job, the smallest of: the control group's limit (cgroup v2 memory.max, or
 * v1 memory.limit_in_bytes, of this process's group and its parents), Slurm's allocation
 * (SLURM_MEM_PER_NODE, or SLURM_MEM_PER_CPU times SLURM_CPUS_ON_NODE), and the physical memory.
 * GNU sort sizes its buffer the same way, from the physical memory and the resource limits.
 */
#ifndef SORTEX_UTIL_MEM_H
#define SORTEX_UTIL_MEM_H

#include <stdint.h>

/** Where util_node_memory()'s figure came from. */
enum util_mem_source {
    UTIL_MEM_PHYSICAL, /* the machine's physical memory */
    UTIL_MEM_CGROUP,   /* a control group's limit */
    UTIL_MEM_SLURM,    /* Slurm's allocation on this node */
    UTIL_MEM_SOURCE_COUNT
};

/** The name of a source ("physical memory", "cgroup limit", "Slurm allocation"). */
const char *util_mem_source_name(enum util_mem_source s);

/**
 * The bytes of memory the processes of this job on this node may use together: the smallest of
 * the limits above, and in *@source (may be NULL) which one it was. 0 when none can be read.
 */
uint64_t util_node_memory(enum util_mem_source *source);

#endif
