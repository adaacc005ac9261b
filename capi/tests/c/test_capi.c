/* Tests of libstreamtrace's C API, compiled with the system C compiler against the
 * generated header (scripts/capi.sh runs them, also under valgrind).
 *
 *   test_capi VECTOR.stv... -- ELF
 *
 * For every golden vector (testbenches/vectors, docs/vectors-format.md): the [image] units
 * become sections, and each [trace CONFIG] decodes, pushed one byte at a time through
 * st_decoder_next and whole through the fast path with a small buffer, to exactly the
 * [addresses] of the file. Then the error paths: bad configuration, NULL arguments, push
 * after finish, a truncated trace and code outside every section (ERROR elements with a
 * bit offset and a message), a missing ELF, and symbol lookup in a real ELF. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "streamtrace.h"

static int failures = 0;
static int checks = 0;

#define CHECK(cond, ...)                                                    \
    do {                                                                    \
        checks++;                                                           \
        if (!(cond)) {                                                      \
            failures++;                                                     \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                   \
            fprintf(stderr, "\n");                                          \
        }                                                                   \
    } while (0)

enum { MAX_UNITS = 4096, MAX_TRACES = 16, MAX_BYTES = 1 << 16, MAX_ADDRS = 1 << 16 };

struct unit { uint32_t addr; uint8_t bytes[4]; size_t len; };
struct trace { char config[128]; uint8_t *bytes; size_t len; };
struct vector {
    struct unit units[MAX_UNITS];
    size_t nunits;
    struct trace traces[MAX_TRACES];
    size_t ntraces;
    uint32_t addrs[MAX_ADDRS];
    size_t naddrs;
};

static int parse_vector(const char *path, struct vector *v) {
    FILE *f = fopen(path, "r");
    if (!f) { perror(path); return 0; }
    char line[4096];
    enum { NONE, IMAGE, ADDRESSES, TRACE } sect = NONE;
    memset(v, 0, sizeof *v);
    while (fgets(line, sizeof line, f)) {
        char *hash = strchr(line, '#');
        if (hash) *hash = 0;
        if (line[0] == '[') {
            sect = NONE;
            if (strncmp(line, "[image]", 7) == 0) sect = IMAGE;
            else if (strncmp(line, "[addresses]", 11) == 0) sect = ADDRESSES;
            else if (strncmp(line, "[trace ", 7) == 0 && v->ntraces < MAX_TRACES) {
                struct trace *t = &v->traces[v->ntraces++];
                char *end = strchr(line, ']');
                if (end) *end = 0;
                snprintf(t->config, sizeof t->config, "%.120s", line + 7);
                t->bytes = malloc(MAX_BYTES);
                sect = TRACE;
            }
            continue;
        }
        if (sect == IMAGE && strncmp(line, "mem ", 4) == 0 && v->nunits < MAX_UNITS) {
            char hex[16] = {0};
            struct unit *u = &v->units[v->nunits];
            if (sscanf(line + 4, "%x: %15s", &u->addr, hex) != 2) continue;
            unsigned long w = strtoul(hex, NULL, 16);
            u->len = strlen(hex) / 2;
            for (size_t i = 0; i < u->len; i++) u->bytes[i] = (uint8_t)(w >> (8 * i));
            v->nunits++;
        } else if (sect == ADDRESSES && strncmp(line, "addr ", 5) == 0) {
            char *p = line + 5, *end;
            for (;;) {
                unsigned long a = strtoul(p, &end, 16);
                if (end == p || v->naddrs >= MAX_ADDRS) break;
                v->addrs[v->naddrs++] = (uint32_t)a;
                p = end;
            }
        } else if (sect == TRACE && strncmp(line, "bytes ", 6) == 0) {
            struct trace *t = &v->traces[v->ntraces - 1];
            char *p = line + 6, *end;
            for (;;) {
                unsigned long b = strtoul(p, &end, 16);
                if (end == p || t->len >= MAX_BYTES) break;
                t->bytes[t->len++] = (uint8_t)b;
                p = end;
            }
        }
    }
    fclose(f);
    return v->nunits > 0 && v->ntraces > 0 && v->naddrs > 0;
}

static StImage *image_of(const struct vector *v) {
    StImage *img = NULL;
    CHECK(st_image_new(&img) == ST_OK, "%s", st_last_error());
    for (size_t i = 0; i < v->nunits; i++) {
        StStatus s = st_image_add_section(img, NULL, v->units[i].addr, v->units[i].bytes, v->units[i].len);
        CHECK(s == ST_OK, "unit %zu: %s", i, st_last_error());
    }
    return img;
}

static StDecoder *decoder_for(const char *config, const StImage *img) {
    StConfig *cfg = NULL;
    StDecoder *dec = NULL;
    CHECK(st_config_parse(config, &cfg) == ST_OK, "%s: %s", config, st_last_error());
    CHECK(st_decoder_new(cfg, img, &dec) == ST_OK, "%s: %s", config, st_last_error());
    st_config_free(cfg);
    return dec;
}

/* Push one byte at a time, pull elements; the addresses must equal the vector's. */
static void byte_by_byte(const struct vector *v, const struct trace *t, const StImage *img) {
    StDecoder *dec = decoder_for(t->config, img);
    uint32_t *got = malloc(sizeof(uint32_t) * MAX_ADDRS);
    size_t n = 0, pushed = 0;
    int ended = 0, errors = 0;
    for (;;) {
        StElement el;
        StStatus s = st_decoder_next(dec, &el);
        if (s == ST_NEED_INPUT) {
            if (pushed < t->len) {
                CHECK(st_decoder_push(dec, &t->bytes[pushed], 1) == ST_OK, "push");
                pushed++;
            } else {
                CHECK(st_decoder_finish(dec) == ST_OK, "finish");
            }
            continue;
        }
        if (s == ST_END) break;
        CHECK(s == ST_OK, "%s: status %d", t->config, s);
        if (s != ST_OK) break;
        if (el.kind == ST_ELEM_INSTRUCTIONS) {
            const uint32_t *a;
            size_t k;
            CHECK(st_decoder_element_addresses(dec, &a, &k) == ST_OK, "addresses");
            CHECK(k == el.length && k > 0, "%s: length %u, %zu addresses", t->config, el.length, k);
            CHECK(a[0] == (el.address | el.thumb), "%s: first address", t->config);
            for (size_t i = 0; i < k && n < MAX_ADDRS; i++) got[n++] = a[i];
        } else if (el.kind == ST_ELEM_END) {
            ended = 1;
        } else if (el.kind == ST_ELEM_ERROR) {
            errors++;
            fprintf(stderr, "%s: %s\n", t->config, st_decoder_error_message(dec));
        }
    }
    CHECK(ended && errors == 0, "%s: ended %d, errors %d", t->config, ended, errors);
    CHECK(n == v->naddrs, "%s: %zu addresses, expected %zu", t->config, n, v->naddrs);
    for (size_t i = 0; i < n && i < v->naddrs; i++)
        if (got[i] != v->addrs[i]) {
            CHECK(got[i] == v->addrs[i], "%s: address %zu is %08x, expected %08x", t->config, i, got[i], v->addrs[i]);
            break;
        }
    free(got);
    st_decoder_free(dec);
}

/* Push everything, then the fast path with a 5-address buffer. */
static void fast_path(const struct vector *v, const struct trace *t, const StImage *img) {
    StDecoder *dec = decoder_for(t->config, img);
    CHECK(st_decoder_push(dec, t->bytes, t->len) == ST_OK, "push");
    CHECK(st_decoder_finish(dec) == ST_OK, "finish");
    CHECK(st_decoder_push(dec, t->bytes, 1) == ST_ERR_STATE, "push after finish");
    size_t n = 0;
    int ended = 0, mismatch = 0;
    for (;;) {
        uint32_t buf[5];
        size_t k = 0;
        StStatus s = st_decoder_read_addresses(dec, buf, 5, &k);
        for (size_t i = 0; i < k; i++, n++)
            if (n >= v->naddrs || buf[i] != v->addrs[n]) mismatch = 1;
        if (s == ST_ELEMENT_PENDING) {
            StElement el;
            CHECK(st_decoder_next(dec, &el) == ST_OK, "pending element");
            CHECK(el.kind != ST_ELEM_ERROR && el.kind != ST_ELEM_INSTRUCTIONS, "%s: kind %d", t->config, el.kind);
            if (el.kind == ST_ELEM_END) ended = 1;
        } else if (s == ST_END) {
            break;
        } else {
            CHECK(s == ST_OK, "%s: fast path status %d", t->config, s);
            if (s != ST_OK) break;
        }
    }
    CHECK(ended && !mismatch && n == v->naddrs, "%s: fast path: %zu addresses, mismatch %d", t->config, n, mismatch);
    st_decoder_free(dec);
}

/* The trace cut in half: an ERROR element naming the truncation, with a bit offset. */
static void truncated(const struct trace *t, const StImage *img) {
    StDecoder *dec = decoder_for(t->config, img);
    st_decoder_push(dec, t->bytes, t->len / 2);
    st_decoder_finish(dec);
    StElement el;
    int errors = 0;
    while (st_decoder_next(dec, &el) == ST_OK)
        if (el.kind == ST_ELEM_ERROR) {
            errors++;
            CHECK(strstr(st_decoder_error_message(dec), "truncated") != NULL, "%s", st_decoder_error_message(dec));
            CHECK(el.bit_offset <= 8 * (t->len / 2), "offset %llu", (unsigned long long)el.bit_offset);
        }
    CHECK(errors == 1, "%s: %d errors on a truncated trace", t->config, errors);
    st_decoder_free(dec);
}

int main(int argc, char **argv) {
    const char *elf = NULL;
    static struct vector v;
    int vectors = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) {
            elf = i + 1 < argc ? argv[i + 1] : NULL;
            break;
        }
        CHECK(parse_vector(argv[i], &v), "%s: cannot parse", argv[i]);
        StImage *img = image_of(&v);
        for (size_t k = 0; k < v.ntraces; k++) {
            byte_by_byte(&v, &v.traces[k], img);
            fast_path(&v, &v.traces[k], img);
        }
        truncated(&v.traces[0], img);
        /* Without the first executed instruction: the first stream is outside every section. */
        StImage *partial = NULL;
        st_image_new(&partial);
        for (size_t u = 0; u < v.nunits; u++)
            if (v.units[u].addr != (v.addrs[0] & ~1u))
                st_image_add_section(partial, "code", v.units[u].addr, v.units[u].bytes, v.units[u].len);
        StDecoder *dec = decoder_for(v.traces[0].config, partial);
        st_image_free(partial); /* the decoder keeps its reference */
        st_decoder_push(dec, v.traces[0].bytes, v.traces[0].len);
        st_decoder_finish(dec);
        StElement el;
        int outside = 0;
        while (st_decoder_next(dec, &el) == ST_OK)
            if (el.kind == ST_ELEM_ERROR && strstr(st_decoder_error_message(dec), "unmapped")) outside++;
        CHECK(outside >= 1, "%s: no unmapped-code error", argv[i]);
        st_decoder_free(dec);
        /* Overlapping sections are refused with both names. */
        StStatus s = st_image_add_section(img, "again", v.units[0].addr, v.units[0].bytes, v.units[0].len);
        CHECK(s == ST_ERR_IMAGE && strstr(st_last_error(), "overlaps"), "overlap: %d %s", s, st_last_error());
        st_image_free(img);
        for (size_t k = 0; k < v.ntraces; k++) free(v.traces[k].bytes);
        vectors++;
    }
    CHECK(vectors >= 1, "no vectors given");

    /* Bad configuration, NULL arguments. */
    StConfig *cfg = NULL;
    CHECK(st_config_parse("rsdc-24x4-128", &cfg) == ST_ERR_CONFIG && cfg == NULL, "bad config accepted");
    CHECK(strstr(st_last_error(), "power of two") != NULL, "message: %s", st_last_error());
    CHECK(st_config_parse(NULL, &cfg) == ST_ERR_NULL, "NULL text");
    CHECK(st_decoder_next(NULL, NULL) == ST_ERR_NULL, "NULL decoder");
    CHECK(st_config_parse("rsdc-32x4-128,isa=arm", &cfg) == ST_OK, "%s", st_last_error());
    char canon[64];
    size_t needed = 0;
    CHECK(st_config_canonical(cfg, canon, sizeof canon, &needed) == ST_OK && needed == strlen(canon) + 1, "canonical");
    CHECK(strcmp(canon, "rsdc-32x4-128,isa=arm") == 0, "canonical form %s", canon);
    st_config_free(cfg);
    st_config_free(NULL);
    st_image_free(NULL);
    st_decoder_free(NULL);

    /* ELF files: a missing one is an error naming it; symbols of a real one. */
    StImage *img = NULL;
    st_image_new(&img);
    CHECK(st_image_add_elf(img, "/nonexistent/prog.elf") == ST_ERR_IMAGE, "missing ELF");
    CHECK(strstr(st_last_error(), "/nonexistent/prog.elf") != NULL, "%s", st_last_error());
    if (elf) {
        CHECK(st_image_add_elf(img, elf) == ST_OK, "%s: %s", elf, st_last_error());
        CHECK(st_image_add_elf(img, elf) == ST_ERR_IMAGE, "the same ELF twice overlaps");
        char name[128];
        uint32_t off = 99;
        CHECK(st_image_symbol(img, 0x8000, name, sizeof name, &off) == ST_OK, "no symbol at 0x8000");
        CHECK(strcmp(name, "_start") == 0 && off == 0, "symbol at 0x8000: %s+%u", name, off);
    } else {
        CHECK(elf != NULL, "no ELF after --");
    }
    st_image_free(img);

    printf("test_capi: %d checks, %d failures, %d vectors\n", checks, failures, vectors);
    return failures == 0 ? 0 : 1;
}
