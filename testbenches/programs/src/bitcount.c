/* bitcount (automotive): six ways of counting the set bits of LCG words, called through a
   table of function pointers, cross-checked against each other.
   Usage: bitcount [iterations]   (default 15000) */
#include <stdio.h>
#include "common.h"

static unsigned char byte_bits[256];

static int count_shift(uint32_t x)
{
    int n = 0;
    while (x) {
        n += x & 1;
        x >>= 1;
    }
    return n;
}

static int count_sparse(uint32_t x)
{
    int n = 0;
    while (x) {
        x &= x - 1;
        n++;
    }
    return n;
}

static int count_nibble(uint32_t x)
{
    static const unsigned char nib[16] = {0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4};
    int n = 0;
    while (x) {
        n += nib[x & 15];
        x >>= 4;
    }
    return n;
}

static int count_bytes(uint32_t x)
{
    return byte_bits[x & 255] + byte_bits[(x >> 8) & 255] + byte_bits[(x >> 16) & 255] + byte_bits[x >> 24];
}

static int count_parallel(uint32_t x)
{
    x = x - ((x >> 1) & 0x55555555u);
    x = (x & 0x33333333u) + ((x >> 2) & 0x33333333u);
    x = (x + (x >> 4)) & 0x0F0F0F0Fu;
    return (int)((x * 0x01010101u) >> 24);
}

static int count_recursive(uint32_t x)
{
    if (x == 0) return 0;
    return (int)(x & 1) + count_recursive(x >> 1);
}

typedef int (*counter)(uint32_t);
static counter const counters[] = {count_shift, count_sparse, count_nibble, count_bytes, count_parallel, count_recursive};
static const char *const names[] = {"shift", "sparse", "nibble", "bytes", "parallel", "recursive"};
#define NCOUNTERS (sizeof counters / sizeof counters[0])

int main(int argc, char **argv)
{
    uint32_t iters = arg_u32(argc, argv, 1, 15000);
    uint32_t totals[NCOUNTERS] = {0};
    uint32_t mismatches = 0;
    for (int i = 0; i < 256; i++) byte_bits[i] = (unsigned char)count_shift((uint32_t)i);
    lcg_seed(1);
    for (uint32_t i = 0; i < iters; i++) {
        uint32_t x = lcg_next();
        /* Vary the density so that the loops run for different lengths. */
        if (i & 1) x &= lcg_next();
        if (i & 2) x |= lcg_next();
        int first = -1;
        for (unsigned k = 0; k < NCOUNTERS; k++) {
            int c = counters[k](x);
            totals[k] += (uint32_t)c;
            if (first < 0) first = c;
            else if (c != first) mismatches++;
        }
    }
    for (unsigned k = 0; k < NCOUNTERS; k++) printf("%-9s %u\n", names[k], (unsigned)totals[k]);
    printf("bitcount: iterations=%u bits=%u mismatches=%u\n", (unsigned)iters, (unsigned)totals[0], (unsigned)mismatches);
    return mismatches != 0;
}
