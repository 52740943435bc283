/*
 * sort/names.h: the names of the enums of the public header, one table each (util_name_find(),
 * util_name_of(), util_names_join() read them): sortex's and sortex-sched's command lines take
 * them, the --stats JSON and the library's error lines write them. The order of a table is the
 * order --help and the error lines list the names in.
 */
#ifndef SORTEX_SORT_NAMES_H
#define SORTEX_SORT_NAMES_H

#include "sort/sortex.h"
#include "util/util.h"

/** enum sortex_balance: auto, eps, exact, sample. */
extern const struct util_name sort_balance_names[SORTEX_BALANCE_COUNT + 1];
/** enum sortex_finish: auto, merge, sort. */
extern const struct util_name sort_finish_names[SORTEX_FINISH_COUNT + 1];
/** enum sortex_io: mpiio, root, rootv. */
extern const struct util_name sort_io_names[SORTEX_IO_COUNT + 1];
/** enum sortex_external: auto, always, never. */
extern const struct util_name sort_external_names[SORTEX_EXTERNAL_COUNT + 1];
/** sortex_config.levels, not an enum but a short list of values: auto (0), 1 .. SORTEX_LEVELS_MAX,
 * so that --levels is one util_cli_enum row wherever it is taken. */
extern const struct util_name sort_levels_names[SORTEX_LEVELS_MAX + 2];

#endif
