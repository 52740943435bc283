/* sort/names.c: the names of the public enums (see names.h). Every table names every value of
 * its enum once: the sizes hold the count, tests/unit/test_cli.c the rest. */
#include "sort/names.h"

const struct util_name sort_balance_names[SORTEX_BALANCE_COUNT + 1] = {
    {"auto", SORTEX_BALANCE_AUTO},
    {"eps", SORTEX_BALANCE_EPS},
    {"exact", SORTEX_BALANCE_EXACT},
    {"sample", SORTEX_BALANCE_SAMPLE},
    {NULL, 0},
};

const struct util_name sort_finish_names[SORTEX_FINISH_COUNT + 1] = {
    {"auto", SORTEX_FINISH_AUTO},
    {"merge", SORTEX_FINISH_MERGE},
    {"sort", SORTEX_FINISH_SORT},
    {NULL, 0},
};

const struct util_name sort_io_names[SORTEX_IO_COUNT + 1] = {
    {"mpiio", SORTEX_IO_MPIIO},
    {"root", SORTEX_IO_ROOT},
    {"rootv", SORTEX_IO_ROOTV},
    {NULL, 0},
};

/* "always" before "never", as --help explains them. */
const struct util_name sort_external_names[SORTEX_EXTERNAL_COUNT + 1] = {
    {"auto", SORTEX_EXTERNAL_AUTO},
    {"always", SORTEX_EXTERNAL_ALWAYS},
    {"never", SORTEX_EXTERNAL_NEVER},
    {NULL, 0},
};

/* --levels: auto is 0, as sortex_config.levels has it; the digits are the levels themselves. */
const struct util_name sort_levels_names[SORTEX_LEVELS_MAX + 2] = {
    {"auto", 0}, {"1", 1}, {"2", 2}, {"3", 3}, {"4", 4}, {NULL, 0},
};
_Static_assert(SORTEX_LEVELS_MAX == 4, "sort_levels_names names every level");
