/*
 * json.c - a minimal JSON writer for mbc_bench --json: one document built in
 * memory while the bench runs and printed at the end, so that stdout holds
 * nothing but it. Commas are placed from a stack of "first member" flags.
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define JSON_DEPTH 16

static char *g_buf;
static size_t g_len, g_cap;
static int g_first[JSON_DEPTH];
static int g_depth;

static void put(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void put(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        return;
    }
    if (g_len + (size_t)n + 1 > g_cap) {
        size_t cap = g_cap == 0 ? 65536 : g_cap;
        while (g_len + (size_t)n + 1 > cap) {
            cap *= 2;
        }
        char *p = realloc(g_buf, cap);
        if (p == NULL) {
            fprintf(stderr, "mbc_bench: FATAL: out of memory\n");
            exit(1);
        }
        g_buf = p;
        g_cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(g_buf + g_len, g_cap - g_len, fmt, ap);
    va_end(ap);
    g_len += (size_t)n;
}

static void put_string(const char *s)
{
    put("\"");
    for (; *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            put("\\%c", c);
        } else if (c < 0x20) {
            put("\\u%04x", c);
        } else {
            put("%c", c);
        }
    }
    put("\"");
}

/* member: the comma and the key of the next value. */
static void member(const char *key)
{
    if (g_depth > 0) {
        if (!g_first[g_depth - 1]) {
            put(",");
        }
        g_first[g_depth - 1] = 0;
        put("\n%*s", 2 * g_depth, "");
    }
    if (key != NULL) {
        put_string(key);
        put(": ");
    }
}

static void open_scope(const char *key, const char *bracket)
{
    member(key);
    put("%s", bracket);
    if (g_depth < JSON_DEPTH) {
        g_first[g_depth++] = 1;
    }
}

static void close_scope(const char *bracket)
{
    if (g_depth > 0) {
        g_depth--;
        if (!g_first[g_depth]) {
            put("\n%*s", 2 * g_depth, "");
        }
    }
    put("%s", bracket);
}

void json_obj_begin(const char *key)
{
    open_scope(key, "{");
}

void json_obj_end(void)
{
    close_scope("}");
}

void json_arr_begin(const char *key)
{
    open_scope(key, "[");
}

void json_arr_end(void)
{
    close_scope("]");
}

void json_str(const char *key, const char *value)
{
    member(key);
    if (value == NULL) {
        put("null");
    } else {
        put_string(value);
    }
}

void json_num(const char *key, double value)
{
    member(key);
    if (isfinite(value)) {
        put("%.6g", value);
    } else {
        put("null");
    }
}

void json_int(const char *key, long long value)
{
    member(key);
    put("%lld", value);
}

void json_bool(const char *key, int value)
{
    member(key);
    put("%s", value ? "true" : "false");
}

void json_stat(const char *key, const stat3 *s)
{
    json_obj_begin(key);
    json_num("median", s->med);
    json_num("min", s->min);
    json_num("max", s->max);
    json_obj_end();
}

void json_print(FILE *f)
{
    if (g_buf != NULL) {
        fwrite(g_buf, 1, g_len, f);
    }
    fputc('\n', f);
    free(g_buf);
    g_buf = NULL;
    g_len = g_cap = 0;
}
