/* ct_util.c - see ct_util.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ct.h"
#include "ct_util.h"
#include "../hexval.h"

#ifndef MBC_CT_VECTORS_DIR
#define MBC_CT_VECTORS_DIR "../shared/vectors"
#endif

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return NULL;
    }
    char *buf = NULL;
    long size = -1;
    if (fseek(f, 0, SEEK_END) == 0) {
        size = ftell(f);
    }
    if (size >= 0 && fseek(f, 0, SEEK_SET) == 0) {
        buf = malloc((size_t)size + 1);
        if (buf != NULL && fread(buf, 1, (size_t)size, f) != (size_t)size) {
            free(buf);
            buf = NULL;
        }
        if (buf != NULL) {
            buf[size] = '\0';
        }
    }
    fclose(f);
    return buf;
}

char *ct_read_vectors(const char *file)
{
    const char *dir = getenv("MBC_VECTORS_DIR");
    if (dir == NULL || dir[0] == '\0') {
        dir = MBC_CT_VECTORS_DIR;
    }
    char path[1024];
    snprintf(path, sizeof(path), "%s/wycheproof/%s", dir, file);
    char *text = read_file(path);
    if (text == NULL) {
        fprintf(stderr, "cannot read %s (set MBC_VECTORS_DIR)\n", path);
    }
    return text;
}

const char *ct_skip_space(const char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') {
        s++;
    }
    return s;
}

int ct_parse_hex_field(const char *obj, const char *name, uint8_t *out, size_t cap, size_t *len)
{
    char pat[64];
    snprintf(pat, sizeof(pat), "\"%s\"", name);
    const char *s = strstr(obj, pat);
    if (s == NULL) {
        return -1;
    }
    s = ct_skip_space(s + strlen(pat));
    if (*s != ':') {
        return -1;
    }
    s = ct_skip_space(s + 1);
    if (*s != '"') {
        return -1;
    }
    s++;
    size_t digits = 0;
    while (mbt_hexval(s[digits]) >= 0) {
        digits++;
    }
    if (s[digits] != '"' || (digits + 1) / 2 > cap) {
        return -1;
    }
    size_t n = (digits + 1) / 2;
    size_t d = 0;
    for (size_t i = 0; i < n; i++) {
        int hi = (i == 0 && digits % 2 == 1) ? 0 : mbt_hexval(s[d++]);
        int lo = mbt_hexval(s[d++]);
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    *len = n;
    return 0;
}

static uint64_t rng_state;

void ct_rng_seed(uint64_t seed)
{
    rng_state = seed != 0 ? seed : 0x9E3779B97F4A7C15ull;
}

uint8_t ct_rng_byte(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint8_t)(rng_state >> 32);
}

int ct_select_impl(mbc_alg alg, const char *want, uint64_t allowed)
{
    mbc_cpu_restrict(allowed);
    const char *got = mbc_impl_name(alg);
    return got != NULL && strcmp(got, want) == 0;
}

int ct_is_public(const void *p, size_t len)
{
    return len == 0 || __msan_test_shadow(p, len) == -1;
}

int ct_bit_is_secret(const void *p, size_t bit)
{
    /* shifts and masks by constants carry the shadow bit for bit */
    const uint8_t b = (uint8_t)((((const uint8_t *)p)[bit / 8] >> (bit % 8)) & 1u);
    return !ct_is_public(&b, 1);
}

int ct_all_bytes_secret(const void *p, size_t len)
{
    int all = len > 0;
    for (size_t i = 0; i < len; i++) {
        all &= !ct_is_public((const uint8_t *)p + i, 1);
    }
    return all;
}

static struct ct_release releases[CT_MAX_RELEASES];
static size_t num_releases;
static int releases_lost;

/* record_release: mbc_msan_release_hook while recording. */
static void record_release(const void *p, size_t len)
{
    if (num_releases == CT_MAX_RELEASES || len > CT_RELEASE_BYTES) {
        releases_lost = 1;
        return;
    }
    struct ct_release *r = &releases[num_releases++];
    r->at = p;
    r->len = len;
    memcpy(r->copy, p, len);
}

void ct_record(int on)
{
    if (on) {
        num_releases = 0;
        releases_lost = 0;
    }
    mbc_msan_release_hook = on ? record_release : NULL;
}

const struct ct_release *ct_releases(size_t *count)
{
    *count = num_releases;
    return releases_lost ? NULL : releases;
}

int ct_main(int argc, char **argv, int (*run_checks)(void), int (*run_control)(int index))
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc == 1) {
        return run_checks();
    }
    if (argc == 2 && strcmp(argv[1], "--leaky") == 0) {
        return run_control(0);
    }
    if (argc == 2 && strcmp(argv[1], "--leaky-index") == 0) {
        return run_control(1);
    }
    fprintf(stderr, "usage: %s [--leaky | --leaky-index]\n", argv[0]);
    return 2;
}
