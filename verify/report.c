/*
 * verify/report.c: printing a verify_result as text or JSON (see verify.h). Records of a
 * byte-key format begin with valsort's own lines, in its words and order, so that a user can
 * compare them with what valsort 1.5 (Chris Nyberg, the Sort Benchmark) prints for the file.
 */
#include "verify/verify.h"

#include <inttypes.h>
#include <string.h>

#include "util/json.h"

/* Writes key @k (file encoding) in the notation of @type: "-1" for i64, "0.25" for f64. */
static void format_key(const struct util_format *type, uint64_t k, char *buf, size_t cap)
{
    if (strcmp(type->name, "i64") == 0) {
        (void)snprintf(buf, cap, "%" PRId64, (int64_t)k);
    } else if (strcmp(type->name, "f64") == 0) {
        double d;
        memcpy(&d, &k, sizeof(d));
        (void)snprintf(buf, cap, "%.17g", d);
    } else {
        (void)snprintf(buf, cap, "%" PRIu64, k);
    }
}

/* Key bytes in hex ("4a696d47..."), "..." after VERIFY_KEY_SHOWN of a longer key. */
static void format_bytes(const unsigned char *b, size_t shown, size_t len, char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < shown && used + 3 <= cap; i++) {
        used += (size_t)snprintf(buf + used, cap - used, "%02x", b[i]);
    }
    if (len > shown && used + 4 <= cap) {
        (void)snprintf(buf + used, cap - used, "...");
    }
}

/* The keys of the first out-of-order pair into @a and @b, each of @cap bytes: numbers in the
 * key type's notation, byte keys in hex. */
static void format_pair(const struct util_format *type, const struct verify_result *res, char *a,
                        char *b, size_t cap)
{
    if (res->records) {
        format_bytes(res->bad_prev_bytes, res->bad_shown, type->key_size, a, cap);
        format_bytes(res->bad_key_bytes, res->bad_shown, type->key_size, b, cap);
    } else {
        format_key(type, res->bad_prev, a, cap);
        format_key(type, res->bad_key, b, cap);
    }
}

static const struct util_format *type_of(const struct verify_config *cfg)
{
    return cfg->format ? cfg->format : util_format_find("u64");
}

static double mb_per_s(const struct verify_result *res)
{
    return res->seconds > 0 ? (double)res->bytes / res->seconds / 1e6 : 0.0;
}

/* "a.bin", "a.bin, b.bin" or "a.bin ... z.bin" for a long list. */
static void print_files(FILE *out, const char *const *paths, size_t n)
{
    if (n <= 3) {
        for (size_t i = 0; i < n; i++) {
            fprintf(out, "%s%s", i ? ", " : "", paths[i]);
        }
    } else {
        fprintf(out, "%s ... %s", paths[0], paths[n - 1]);
    }
}

/*
 * valsort's report: "First unordered record is record N" (only when unordered), "Records: N",
 * "Checksum: X", then "Duplicate keys: D" and "SUCCESS - all records are in order", or
 * "ERROR - there are N unordered records" (valsort leaves the duplicates out then).
 */
static void print_valsort(FILE *out, const struct verify_result *res)
{
    char crc[40];
    verify_crc_format(res->sorted_crc, crc, sizeof(crc));
    if (!res->sorted) {
        fprintf(out, "First unordered record is record %" PRIu64 "\n", res->first_bad);
    }
    fprintf(out, "Records: %" PRIu64 "\n", res->sorted_sum.count);
    fprintf(out, "Checksum: %s\n", crc);
    if (res->sorted) {
        fprintf(out, "Duplicate keys: %" PRIu64 "\n", res->duplicates);
        fprintf(out, "SUCCESS - all records are in order\n");
    } else {
        fprintf(out, "ERROR - there are %" PRIu64 " unordered records\n", res->descents);
    }
}

static void print_sum(FILE *out, struct verify_checksum c)
{
    fprintf(out,
            "checksum:  count %" PRIu64 ", xxh3-sum 0x%016" PRIx64 ", xxh64-sum 0x%016" PRIx64 "\n",
            c.count, c.xxh3, c.xxh64);
}

void verify_print_text(FILE *out, const struct verify_config *cfg, const struct verify_result *res)
{
    const struct util_format *type = type_of(cfg);
    char a[2 * VERIFY_KEY_SHOWN + 8], b[2 * VERIFY_KEY_SHOWN + 8], what[128];
    const char *unit = res->records ? "record" : "key";

    /* What was read; records first in valsort's words. */
    if (res->records) {
        print_valsort(out, res);
        util_format_describe(type, what, sizeof(what));
        fprintf(out, "sorted:    ");
        print_files(out, cfg->sorted, cfg->n_sorted);
        fprintf(out, " (%zu file%s, %" PRIu64 " records, format %s)\n", cfg->n_sorted,
                cfg->n_sorted == 1 ? "" : "s", res->sorted_sum.count, what);
    } else {
        fprintf(out, "sorted:    ");
        print_files(out, cfg->sorted, cfg->n_sorted);
        fprintf(out, " (%zu file%s, %" PRIu64 " keys, type %s)\n", cfg->n_sorted,
                cfg->n_sorted == 1 ? "" : "s", res->sorted_sum.count, type->name);
    }

    /* Order. */
    if (res->sorted) {
        fprintf(out, "order:     ok, non-decreasing\n");
    } else {
        format_pair(type, res, a, b, sizeof(a));
        fprintf(out,
                "order:     FAILED at %s %" PRIu64 ": key[%" PRIu64 "] = %s > key[%" PRIu64
                "] = %s (%" PRIu64 " descent%s in all)\n",
                unit, res->first_bad, res->first_bad - 1, a, res->first_bad, b, res->descents,
                res->descents == 1 ? "" : "s");
        if (cfg->n_sorted > 1) {
            fprintf(out, "           in part %zu (%s), its %s %" PRIu64 "%s\n", res->bad_file,
                    cfg->sorted[res->bad_file], unit, res->bad_file_index,
                    res->bad_file_index == 0 ? ": the boundary with the previous part" : "");
        }
    }
    print_sum(out, res->sorted_sum);

    /* The multiset. */
    if (res->compared) {
        fprintf(out, "input:     ");
        print_files(out, cfg->inputs, cfg->n_inputs);
        fprintf(out, " (%zu file%s, %" PRIu64 " %ss", cfg->n_inputs, cfg->n_inputs == 1 ? "" : "s",
                res->input_sum.count, unit);
        if (res->records) {
            verify_crc_format(res->input_crc, a, sizeof(a));
            fprintf(out, ", Checksum: %s", a);
        }
        fprintf(out, ")\n");
        print_sum(out, res->input_sum);
        if (res->same_multiset) {
            fprintf(out, "multiset:  ok, same count and checksums%s\n",
                    res->records ? " (of whole records, key and payload)" : "");
        } else if (!res->same_count) {
            fprintf(out,
                    "multiset:  FAILED: count mismatch, %" PRIu64 " sorted %ss but %" PRIu64
                    " input %ss\n",
                    res->sorted_sum.count, unit, res->input_sum.count, unit);
        } else {
            fprintf(out,
                    "multiset:  FAILED: checksum mismatch with the same count (%" PRIu64 " %ss)\n",
                    res->sorted_sum.count, unit);
        }
    } else {
        fprintf(out, "multiset:  not checked (no --input)\n");
    }

    fprintf(out, "time:      %.3f s, %.1f MB/s, %d thread%s\n", res->seconds, mb_per_s(res),
            res->threads, res->threads == 1 ? "" : "s");
    fprintf(out, "verdict:   %s\n", res->valid ? "valid" : "INVALID");
}

static void json_files(FILE *out, const char *const *paths, size_t n)
{
    fputc('[', out);
    for (size_t i = 0; i < n; i++) {
        if (i > 0) {
            fputc(',', out);
        }
        util_json_string(out, paths[i]);
    }
    fputc(']', out);
}

/* The checksum's fields; for records also their count and gensort's checksum @crc. */
static void json_sum(FILE *out, struct verify_checksum c, const struct verify_crc_sum *crc)
{
    fprintf(out,
            "\"keys\":%" PRIu64 ",\"xxh3_sum\":\"0x%016" PRIx64 "\",\"xxh64_sum\":\"0x%016" PRIx64
            "\"",
            c.count, c.xxh3, c.xxh64);
    if (crc != NULL) {
        char hex[40];
        verify_crc_format(*crc, hex, sizeof(hex));
        fprintf(out, ",\"records\":%" PRIu64 ",\"checksum\":\"%s\"", c.count, hex);
    }
}

void verify_print_json(FILE *out, const struct verify_config *cfg, const struct verify_result *res)
{
    const struct util_format *type = type_of(cfg);
    char a[2 * VERIFY_KEY_SHOWN + 8], b[2 * VERIFY_KEY_SHOWN + 8];

    fprintf(out, "{\"verdict\":\"%s\",\"valid\":%s,\"type\":", res->valid ? "valid" : "invalid",
            res->valid ? "true" : "false");
    util_json_string(out, type->name);
    if (res->records) {
        fprintf(out, ",\"format\":{\"name\":");
        util_json_string(out, type->name);
        fprintf(out, ",\"record_size\":%zu,\"key_offset\":%zu,\"key_size\":%zu}", type->record_size,
                type->key_offset, type->key_size);
    }

    fprintf(out, ",\"sorted\":{\"files\":");
    json_files(out, cfg->sorted, cfg->n_sorted);
    fputc(',', out);
    json_sum(out, res->sorted_sum, res->records ? &res->sorted_crc : NULL);
    fputc('}', out);

    fprintf(out, ",\"order\":{\"ok\":%s,\"descents\":%" PRIu64, res->sorted ? "true" : "false",
            res->descents);
    if (res->records) {
        fprintf(out, ",\"duplicates\":%" PRIu64, res->duplicates);
    }
    if (res->sorted) {
        fprintf(out, ",\"first_bad\":null}");
    } else {
        format_pair(type, res, a, b, sizeof(a));
        fprintf(out, ",\"first_bad\":%" PRIu64 ",\"file\":%zu,\"file_index\":%" PRIu64 ",\"prev\":",
                res->first_bad, res->bad_file, res->bad_file_index);
        util_json_string(out, a);
        fprintf(out, ",\"key\":");
        util_json_string(out, b);
        fputc('}', out);
    }

    if (res->compared) {
        fprintf(out, ",\"input\":{\"files\":");
        json_files(out, cfg->inputs, cfg->n_inputs);
        fputc(',', out);
        json_sum(out, res->input_sum, res->records ? &res->input_crc : NULL);
        fprintf(out, "},\"multiset\":{\"checked\":true,\"same_count\":%s,\"same_checksum\":%s}",
                res->same_count ? "true" : "false", res->same_multiset ? "true" : "false");
    } else {
        fprintf(out, ",\"input\":null,\"multiset\":{\"checked\":false}");
    }

    fprintf(out, ",\"bytes\":%" PRIu64 ",\"seconds\":%.6f,\"mb_per_s\":%.1f,\"threads\":%d}\n",
            res->bytes, res->seconds, mb_per_s(res), res->threads);
}
