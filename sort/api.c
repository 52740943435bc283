/*
 * sort/api.c: the public interface's small functions (sort/sortex.h): the version, names and
 * lookups of phases, back-ends and formats, the default configuration, and the buffers a caller
 * hands the sort. The sorts themselves are sort/sortex.c's.
 */
#include <stdint.h>
#include <string.h>

#include "sort/internal.h"
#include "util/alloc.h"
#include "util/format.h"
#include "util/util.h"

/* The public error codes are the library's own, which every phase returns. */
#define SAME_CODE(a, b) ((int)(a) == (int)(b))
_Static_assert(SAME_CODE(SORTEX_OK, UTIL_OK) && SAME_CODE(SORTEX_EUSAGE, UTIL_EUSAGE) &&
                   SAME_CODE(SORTEX_EIO, UTIL_EIO) && SAME_CODE(SORTEX_ENOMEM, UTIL_ENOMEM) &&
                   SAME_CODE(SORTEX_EMPI, UTIL_EMPI) && SAME_CODE(SORTEX_EINJECT, UTIL_EINJECT) &&
                   SAME_CODE(SORTEX_ECHECK, UTIL_ECHECK),
               "enum sortex_error and enum util_err differ");
#undef SAME_CODE

static const char *const phase_names[SORTEX_PHASE_COUNT] = {
    "read",  "local_sort", "sample",     "splitters",    "bucket", "exchange",
    "finish", "write",     "check",      "distribute",   "sort_buckets",
};

const char *sortex_version(void)
{
    return SORTEX_VERSION;
}

const char *sortex_phase_name(enum sortex_phase phase)
{
    return (unsigned)phase < SORTEX_PHASE_COUNT ? phase_names[phase] : NULL;
}

void sortex_config_default(struct sortex_config *cfg)
{
    if (cfg != NULL) {
        memset(cfg, 0, sizeof(*cfg));
    }
}

const struct exchange_ops *sortex_exchange_find(const char *name)
{
    return name != NULL ? exchange_find(name) : NULL;
}

const char *sortex_exchange_name(int i)
{
    const struct exchange_ops *const *list = exchange_list();
    for (int j = 0; list[j] != NULL; j++) {
        if (j == i) {
            return list[j]->name;
        }
    }
    return NULL;
}

const struct util_format *sortex_format_find(const char *name)
{
    return name != NULL ? util_format_find(name) : NULL;
}

int sortex_format_layout(size_t record_size, size_t key_offset, size_t key_size,
                         const struct util_format **out)
{
    if (out == NULL) {
        return SORTEX_EUSAGE;
    }
    *out = NULL;
    /* util_format_layout()'s rules, checked here first: it would print. */
    if (record_size == 0 || record_size > UTIL_RECORD_MAX || key_size == 0 ||
        key_offset > record_size || key_size > record_size - key_offset) {
        return SORTEX_EUSAGE;
    }
    struct util_format *f = util_malloc(sizeof(*f));
    if (f == NULL) {
        return SORTEX_ENOMEM;
    }
    (void)util_format_layout(record_size, key_offset, key_size, f);
    *out = f;
    return SORTEX_OK;
}

void sortex_format_free(const struct util_format *format)
{
    /* Only layouts are the caller's; the named formats are static. */
    for (const struct util_format *const *f = util_format_list(); *f != NULL; f++) {
        if (*f == format) {
            return;
        }
    }
    util_free((void *)(uintptr_t)format);
}

size_t sortex_record_size(const struct util_format *format)
{
    return format != NULL ? format->record_size : sizeof(uint64_t);
}

uint64_t *sortex_alloc_keys(uint64_t n)
{
    if (n > SIZE_MAX / sizeof(uint64_t)) {
        return NULL;
    }
    return util_alloc_big((size_t)n * sizeof(uint64_t));
}

void sortex_free_keys(uint64_t *keys)
{
    util_free_big(keys);
}

void *sortex_alloc_records(const struct util_format *format, uint64_t n)
{
    size_t stride = sortex_record_size(format);
    if (n > SIZE_MAX / stride) {
        return NULL;
    }
    return util_alloc_big((size_t)n * stride);
}

void sortex_free_records(void *records)
{
    util_free_big(records);
}
