/*
 * tests/python/layout.c: prints the layout of the public structs as the C compiler lays them
 * out, one line each: "STRUCT SIZE" and "STRUCT.FIELD OFFSET SIZE". tests/63-python.bats
 * compares it with the same lines from the Python module's ctypes mirror (python/sortex/_lib.py),
 * so that a change of sort/sortex.h not made there too fails a test.
 */
#include <stddef.h>
#include <stdio.h>

#include "sort/sortex.h"

#define STRUCT(s) printf("%s %zu\n", #s, sizeof(struct s))
#define FIELD(s, f)                                                                                \
    printf("%s.%s %zu %zu\n", #s, #f, offsetof(struct s, f), sizeof(((struct s *)0)->f))

int main(void)
{
    STRUCT(sortex_config);
    FIELD(sortex_config, exchange);
    FIELD(sortex_config, exchange_auto);
    FIELD(sortex_config, format);
    FIELD(sortex_config, threads);
    FIELD(sortex_config, epsilon);
    FIELD(sortex_config, oversample);
    FIELD(sortex_config, balance);
    FIELD(sortex_config, finish);
    FIELD(sortex_config, mem_limit);
    FIELD(sortex_config, progress);
    FIELD(sortex_config, sync);
    FIELD(sortex_config, io);
    FIELD(sortex_config, check);
    FIELD(sortex_config, levels);
    FIELD(sortex_config, external);
    FIELD(sortex_config, temp_dirs);
    STRUCT(sortex_exchange_stats);
    FIELD(sortex_exchange_stats, bytes_sent);
    FIELD(sortex_exchange_stats, bytes_recv);
    FIELD(sortex_exchange_stats, messages);
    FIELD(sortex_exchange_stats, rounds);
    FIELD(sortex_exchange_stats, max_message);
    FIELD(sortex_exchange_stats, seconds);
    FIELD(sortex_exchange_stats, nextra);
    FIELD(sortex_exchange_stats, extra);
    STRUCT(sortex_level_stats);
    FIELD(sortex_level_stats, groups);
    FIELD(sortex_level_stats, ranks);
    FIELD(sortex_level_stats, exchange);
    FIELD(sortex_level_stats, messages);
    FIELD(sortex_level_stats, bytes_sent);
    FIELD(sortex_level_stats, seconds);
    STRUCT(sortex_stats);
    FIELD(sortex_stats, phase_seconds);
    FIELD(sortex_stats, total_seconds);
    FIELD(sortex_stats, n_total);
    FIELD(sortex_stats, n_in);
    FIELD(sortex_stats, n_out);
    FIELD(sortex_stats, imbalance);
    FIELD(sortex_stats, epsilon_bound);
    FIELD(sortex_stats, samples);
    FIELD(sortex_stats, splitter_rounds);
    FIELD(sortex_stats, balance);
    FIELD(sortex_stats, oversample);
    FIELD(sortex_stats, threads);
    FIELD(sortex_stats, finish);
    FIELD(sortex_stats, check);
    FIELD(sortex_stats, peak_rss_kib);
    FIELD(sortex_stats, buffer_bytes);
    FIELD(sortex_stats, exchange);
    FIELD(sortex_stats, exchange_name);
    FIELD(sortex_stats, exchange_predicted);
    FIELD(sortex_stats, external);
    FIELD(sortex_stats, mem_budget);
    FIELD(sortex_stats, mem_need);
    FIELD(sortex_stats, mem_source);
    FIELD(sortex_stats, buckets);
    FIELD(sortex_stats, split_buckets);
    FIELD(sortex_stats, temp_bytes);
    FIELD(sortex_stats, pass_bytes);
    FIELD(sortex_stats, shifted);
    FIELD(sortex_stats, levels);
    FIELD(sortex_stats, levels_auto);
    FIELD(sortex_stats, levels_price);
    FIELD(sortex_stats, level);
    /* The counts the mirror spells out. */
    printf("SORTEX_PHASE_COUNT %d\n", (int)SORTEX_PHASE_COUNT);
    printf("SORTEX_EXCHANGE_MAX_EXTRA %d\n", (int)SORTEX_EXCHANGE_MAX_EXTRA);
    printf("SORTEX_LEVELS_MAX %d\n", (int)SORTEX_LEVELS_MAX);
    return 0;
}
