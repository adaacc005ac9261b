/* Shared helpers of the streamtrace test programs: a deterministic LCG and argument parsing.
   Every program prints its results with printf and returns 0. */
#ifndef STREAMTRACE_COMMON_H
#define STREAMTRACE_COMMON_H

#include <stdint.h>
#include <stdlib.h>

/* Numerical Recipes' 32-bit LCG. */
static uint32_t lcg_state = 12345u;

static inline void lcg_seed(uint32_t s) { lcg_state = s; }

static inline uint32_t lcg_next(void)
{
    lcg_state = lcg_state * 1664525u + 1013904223u;
    return lcg_state;
}

/* Uniform value in [0, n) from the high bits (the low bits of an LCG are weak). */
static inline uint32_t lcg_below(uint32_t n) { return (uint32_t)(((uint64_t)lcg_next() * n) >> 32); }

/* argv[i] as an unsigned number, or `def` when absent or zero. */
static inline uint32_t arg_u32(int argc, char **argv, int i, uint32_t def)
{
    if (i < argc) {
        unsigned long v = strtoul(argv[i], 0, 0);
        if (v != 0) return (uint32_t)v;
    }
    return def;
}

/* FNV-1a over bytes, for checksums of outputs. */
static inline uint32_t fnv1a(uint32_t h, const void *p, uint32_t n)
{
    const unsigned char *b = (const unsigned char *)p;
    while (n--) {
        h ^= *b++;
        h *= 16777619u;
    }
    return h;
}
#define FNV_INIT 2166136261u

#endif
