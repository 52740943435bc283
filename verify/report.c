/* verify/report.c: printing a verify_result as text or JSON (see verify.h). */
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

static void print_sum(FILE *out, struct verify_checksum c)
{
    fprintf(out,
            "checksum:  count %" PRIu64 ", xxh3-sum 0x%016" PRIx64 ", xxh64-sum 0x%016" PRIx64 "\n",
            c.count, c.xxh3, c.xxh64);
}

void verify_print_text(FILE *out, const struct verify_config *cfg, const struct verify_result *res)
{
    const struct util_format *type = type_of(cfg);
    char a[64], b[64];

    /* What was read. */
    fprintf(out, "sorted:    ");
    print_files(out, cfg->sorted, cfg->n_sorted);
    fprintf(out, " (%zu file%s, %" PRIu64 " keys, type %s)\n", cfg->n_sorted,
            cfg->n_sorted == 1 ? "" : "s", res->sorted_sum.count, type->name);

    /* Order. */
    if (res->sorted) {
        fprintf(out, "order:     ok, non-decreasing\n");
    } else {
        format_key(type, res->bad_prev, a, sizeof(a));
        format_key(type, res->bad_key, b, sizeof(b));
        fprintf(out,
                "order:     FAILED at key %" PRIu64 ": key[%" PRIu64 "] = %s > key[%" PRIu64
                "] = %s (%" PRIu64 " descent%s in all)\n",
                res->first_bad, res->first_bad - 1, a, res->first_bad, b, res->descents,
                res->descents == 1 ? "" : "s");
        if (cfg->n_sorted > 1) {
            fprintf(out, "           in part %zu (%s), its key %" PRIu64 "%s\n", res->bad_file,
                    cfg->sorted[res->bad_file], res->bad_file_index,
                    res->bad_file_index == 0 ? ": the boundary with the previous part" : "");
        }
    }
    print_sum(out, res->sorted_sum);

    /* The multiset. */
    if (res->compared) {
        fprintf(out, "input:     ");
        print_files(out, cfg->inputs, cfg->n_inputs);
        fprintf(out, " (%zu file%s, %" PRIu64 " keys)\n", cfg->n_inputs,
                cfg->n_inputs == 1 ? "" : "s", res->input_sum.count);
        print_sum(out, res->input_sum);
        if (res->same_multiset) {
            fprintf(out, "multiset:  ok, same count and checksums\n");
        } else if (!res->same_count) {
            fprintf(out,
                    "multiset:  FAILED: count mismatch, %" PRIu64 " sorted keys but %" PRIu64
                    " input keys\n",
                    res->sorted_sum.count, res->input_sum.count);
        } else {
            fprintf(out,
                    "multiset:  FAILED: checksum mismatch with the same count (%" PRIu64 " keys)\n",
                    res->sorted_sum.count);
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

static void json_sum(FILE *out, struct verify_checksum c)
{
    fprintf(out,
            "\"keys\":%" PRIu64 ",\"xxh3_sum\":\"0x%016" PRIx64 "\",\"xxh64_sum\":\"0x%016" PRIx64
            "\"",
            c.count, c.xxh3, c.xxh64);
}

void verify_print_json(FILE *out, const struct verify_config *cfg, const struct verify_result *res)
{
    const struct util_format *type = type_of(cfg);
    char a[64], b[64];

    fprintf(out, "{\"verdict\":\"%s\",\"valid\":%s,\"type\":", res->valid ? "valid" : "invalid",
            res->valid ? "true" : "false");
    util_json_string(out, type->name);

    fprintf(out, ",\"sorted\":{\"files\":");
    json_files(out, cfg->sorted, cfg->n_sorted);
    fputc(',', out);
    json_sum(out, res->sorted_sum);
    fputc('}', out);

    fprintf(out, ",\"order\":{\"ok\":%s,\"descents\":%" PRIu64, res->sorted ? "true" : "false",
            res->descents);
    if (res->sorted) {
        fprintf(out, ",\"first_bad\":null}");
    } else {
        format_key(type, res->bad_prev, a, sizeof(a));
        format_key(type, res->bad_key, b, sizeof(b));
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
        json_sum(out, res->input_sum);
        fprintf(out, "},\"multiset\":{\"checked\":true,\"same_count\":%s,\"same_checksum\":%s}",
                res->same_count ? "true" : "false", res->same_multiset ? "true" : "false");
    } else {
        fprintf(out, ",\"input\":null,\"multiset\":{\"checked\":false}");
    }

    fprintf(out, ",\"bytes\":%" PRIu64 ",\"seconds\":%.6f,\"mb_per_s\":%.1f,\"threads\":%d}\n",
            res->bytes, res->seconds, mb_per_s(res), res->threads);
}
