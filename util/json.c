/* util/json.c: JSON string literals (see json.h). */
#include "util/json.h"

#include <stddef.h>

/* Length of the valid UTF-8 sequence starting at @p (1 to 4), or 0 when it is not one. */
static size_t utf8_len(const unsigned char *p)
{
    size_t n;
    unsigned min;
    unsigned cp;
    if (p[0] < 0x80) {
        return 1;
    } else if ((p[0] & 0xE0) == 0xC0) {
        n = 2, min = 0x80, cp = p[0] & 0x1Fu;
    } else if ((p[0] & 0xF0) == 0xE0) {
        n = 3, min = 0x800, cp = p[0] & 0x0Fu;
    } else if ((p[0] & 0xF8) == 0xF0) {
        n = 4, min = 0x10000, cp = p[0] & 0x07u;
    } else {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80) {
            return 0; /* also stops at the terminating NUL */
        }
        cp = (cp << 6) | (p[i] & 0x3Fu);
    }
    /* No overlong forms, no surrogates, nothing beyond U+10FFFF. */
    if (cp < min || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) {
        return 0;
    }
    return n;
}

void util_json_string(FILE *out, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p != '\0';) {
        unsigned char c = *p;
        size_t n = utf8_len(p);
        if (c == '"' || c == '\\') {
            fputc('\\', out);
            fputc(c, out);
        } else if (c == '\n') {
            fputs("\\n", out);
        } else if (c == '\t') {
            fputs("\\t", out);
        } else if (c == '\r') {
            fputs("\\r", out);
        } else if (c == '\b') {
            fputs("\\b", out);
        } else if (c == '\f') {
            fputs("\\f", out);
        } else if (c < 0x20 || n == 0) {
            fprintf(out, "\\u00%c%c", hex[c >> 4], hex[c & 15]);
            n = 1;
        } else {
            fwrite(p, 1, n, out);
        }
        p += n ? n : 1;
    }
    fputc('"', out);
}
