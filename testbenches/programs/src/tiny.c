/* tiny: the smallest program of the set (a few thousand instructions, most of them newlib's
   start-up and printf). Euclid's gcd and a short Fibonacci loop.
   Usage: tiny [n]   (n = Fibonacci terms, default 20) */
#include <stdio.h>
#include "common.h"

static uint32_t gcd(uint32_t a, uint32_t b)
{
    while (b) {
        uint32_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

int main(int argc, char **argv)
{
    uint32_t n = arg_u32(argc, argv, 1, 20);
    uint32_t a = 0, b = 1;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t t = a + b;
        a = b;
        b = t;
    }
    printf("tiny: fib(%u)=%u gcd=%u\n", (unsigned)n, (unsigned)a, (unsigned)gcd(1071u * n, 462u));
    return 0;
}
