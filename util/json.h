/*
 * util/json.h: the one JSON string writer of every program's JSON output (sortex --stats,
 * sortex-verify --json), so that every path and name is escaped the same way.
 */
#ifndef SORTEX_UTIL_JSON_H
#define SORTEX_UTIL_JSON_H

#include <stdio.h>

/**
 * Writes @s as a JSON string literal to @out (RFC 8259): quotes and backslashes escaped, control
 * characters as \n, \t, \r, \b, \f or \u00XX, and bytes that are not valid UTF-8 as \u00XX of
 * their value (so the document stays valid JSON whatever bytes a path holds). NULL writes "".
 */
void util_json_string(FILE *out, const char *s);

#endif
