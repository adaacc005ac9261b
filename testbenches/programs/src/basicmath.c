/* basicmath (automotive): integer square roots (bit by bit and Newton), integer cube roots,
   real roots of integer cubics by bisection in 16.16 fixed point, gcd, and degree/radian
   conversion in fixed point. Uses the library's 32- and 64-bit division.
   Usage: basicmath [count]   (default 4000) */
#include <stdio.h>
#include "common.h"

static uint32_t isqrt_bits(uint32_t x)
{
    uint32_t r = 0, bit = 1u << 30;
    while (bit > x) bit >>= 2;
    while (bit) {
        if (x >= r + bit) {
            x -= r + bit;
            r = (r >> 1) + bit;
        } else {
            r >>= 1;
        }
        bit >>= 2;
    }
    return r;
}

static uint32_t isqrt_newton(uint32_t x)
{
    if (x < 2) return x;
    uint32_t r = x / 2 + 1, prev;
    do {
        prev = r;
        r = (r + x / r) / 2;
    } while (r < prev);
    return prev;
}

static uint32_t icbrt(uint64_t x)
{
    uint32_t lo = 0, hi = 2642246; /* cbrt(2^64) */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo + 1) / 2;
        if ((uint64_t)mid * mid * mid <= x) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

/* p(x) = a x^3 + b x^2 + c x + d with x in 16.16; result in 16.16 (64-bit). */
static int64_t cubic(int32_t a, int32_t b, int32_t c, int32_t d, int32_t x)
{
    int64_t r = a;
    r = ((r * x) >> 16) + b;
    r = ((r * x) >> 16) + c;
    r = ((r * x) >> 16) + d;
    return r;
}

/* Count sign changes on [-64, 64) in steps of 1 and refine each root by bisection. */
static int cubic_roots(int32_t a, int32_t b, int32_t c, int32_t d, int32_t *roots)
{
    int n = 0;
    int32_t x0 = -(64 << 16);
    int64_t p0 = cubic(a, b, c, d, x0);
    for (int32_t x1 = x0 + (1 << 16); x1 <= (64 << 16) && n < 3; x1 += 1 << 16) {
        int64_t p1 = cubic(a, b, c, d, x1);
        if (p0 == 0) {
            roots[n++] = x0;
        } else if ((p0 < 0) != (p1 < 0) && p1 != 0) {
            int32_t lo = x0, hi = x1;
            int64_t plo = p0;
            while (hi - lo > 1) {
                int32_t mid = lo + (hi - lo) / 2;
                int64_t pm = cubic(a, b, c, d, mid);
                if ((pm < 0) == (plo < 0)) {
                    lo = mid;
                    plo = pm;
                } else {
                    hi = mid;
                }
            }
            roots[n++] = lo;
        }
        x0 = x1;
        p0 = p1;
    }
    return n;
}

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
    uint32_t n = arg_u32(argc, argv, 1, 4000);
    uint32_t sum_sqrt = 0, sum_cbrt = 0, sum_gcd = 0, bad = 0, nroots = 0;
    int32_t sum_roots = 0;
    int64_t sum_rad = 0;
    lcg_seed(3);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t x = lcg_next() >> (i & 15);
        uint32_t s1 = isqrt_bits(x), s2 = isqrt_newton(x);
        if (s1 != s2 || (uint64_t)s1 * s1 > x || (uint64_t)(s1 + 1) * (s1 + 1) <= x) bad++;
        sum_sqrt += s1;
        uint64_t y = ((uint64_t)lcg_next() << 32 | lcg_next()) >> (i & 31);
        sum_cbrt += icbrt(y);
        sum_gcd += gcd(lcg_next() >> 8, lcg_next() >> 12);
        /* degrees (16.16) to radians (16.16): * pi / 180 with pi in 4.28 */
        int32_t deg = (int32_t)lcg_below(720 << 16) - (360 << 16);
        sum_rad += ((int64_t)deg * 843314857) / (180LL << 28);
        if (i % 16 == 0) {
            int32_t roots[3];
            /* (x - r1)(x - r2)(x - r3) with small integer roots, scaled */
            int32_t r1 = (int32_t)lcg_below(60) - 30, r2 = (int32_t)lcg_below(60) - 30, r3 = (int32_t)lcg_below(60) - 30;
            int32_t a = 1 << 16;
            int32_t b = -(r1 + r2 + r3) * 65536;
            int32_t c = (r1 * r2 + r2 * r3 + r1 * r3) * 65536;
            int32_t d = -(r1 * r2 * r3) * 65536;
            int k = cubic_roots(a, b, c, d, roots);
            nroots += (uint32_t)k;
            for (int j = 0; j < k; j++) sum_roots += roots[j] >> 8;
        }
    }
    printf("sqrt=%u cbrt=%u gcd=%u rad=%ld\n", (unsigned)sum_sqrt, (unsigned)sum_cbrt, (unsigned)sum_gcd, (long)sum_rad);
    printf("basicmath: n=%u roots=%u rootsum=%d bad=%u\n", (unsigned)n, (unsigned)nroots, (int)sum_roots, (unsigned)bad);
    return bad != 0;
}
