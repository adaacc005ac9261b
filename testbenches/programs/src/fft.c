/* fft (telecom): radix-2 decimation-in-time complex FFT in Q15 fixed point. The twiddle
   factors come from a 64-bit fixed-point rotation seeded by Taylor series (no libm). A sum of
   tones plus LCG noise is transformed, its strongest bins are found, and the inverse
   transform is compared with the input.
   Usage: fft [repeats] [log2 size]   (defaults 60 and 8) */
#include <stdio.h>
#include "common.h"

#define MAX_LOG 10
#define MAX_N (1 << MAX_LOG)
#define Q30 (1LL << 30)

static int16_t tw_re[MAX_N / 2], tw_im[MAX_N / 2];
static int32_t re[MAX_N], im[MAX_N], in_re[MAX_N];

static int64_t qmul(int64_t a, int64_t b) { return (a * b) >> 30; }

static void make_twiddles(int n)
{
    /* theta = 2 pi / n in Q30; pi = 3373259426 / 2^30 */
    int64_t th = 2 * 3373259426LL / n;
    int64_t th2 = qmul(th, th), th3 = qmul(th2, th), th4 = qmul(th2, th2), th5 = qmul(th4, th);
    int64_t c1 = Q30 - th2 / 2 + th4 / 24, s1 = th - th3 / 6 + th5 / 120;
    int64_t c = Q30, s = 0;
    for (int k = 0; k < n / 2; k++) {
        tw_re[k] = (int16_t)((c + (1 << 14)) >> 15 > 32767 ? 32767 : (c + (1 << 14)) >> 15);
        tw_im[k] = (int16_t)(-((s + (1 << 14)) >> 15)); /* e^{-i theta k} */
        int64_t nc = qmul(c, c1) - qmul(s, s1);
        int64_t ns = qmul(s, c1) + qmul(c, s1);
        c = nc;
        s = ns;
    }
}

static void fft(int n, int log2n, int inverse)
{
    for (int i = 1, j = 0; i < n; i++) {
        int bit = n >> 1;
        for (; j & bit; bit >>= 1) j ^= bit;
        j ^= bit;
        if (i < j) {
            int32_t t = re[i]; re[i] = re[j]; re[j] = t;
            t = im[i]; im[i] = im[j]; im[j] = t;
        }
    }
    for (int len = 2, step = n / 2; len <= n; len <<= 1, step >>= 1) {
        for (int i = 0; i < n; i += len) {
            for (int k = 0; k < len / 2; k++) {
                int32_t wr = tw_re[k * step], wi = inverse ? -tw_im[k * step] : tw_im[k * step];
                int a = i + k, b = i + k + len / 2;
                int32_t xr = (re[b] * wr - im[b] * wi) >> 15;
                int32_t xi = (re[b] * wi + im[b] * wr) >> 15;
                /* scale by 1/2 per stage to stay in range */
                re[b] = (re[a] - xr) >> 1;
                im[b] = (im[a] - xi) >> 1;
                re[a] = (re[a] + xr) >> 1;
                im[a] = (im[a] + xi) >> 1;
            }
        }
    }
    (void)log2n;
}

int main(int argc, char **argv)
{
    uint32_t repeats = arg_u32(argc, argv, 1, 60);
    uint32_t log2n = arg_u32(argc, argv, 2, 8);
    if (log2n > MAX_LOG) log2n = MAX_LOG;
    if (log2n < 3) log2n = 3;
    int n = 1 << log2n;
    make_twiddles(n);
    uint32_t h = FNV_INIT;
    int64_t err_total = 0;
    int peak1 = 0, peak2 = 0;
    lcg_seed(31);
    for (uint32_t r = 0; r < repeats; r++) {
        int f1 = 1 + (int)(r % (uint32_t)(n / 4)), f2 = n / 4 + (int)(r * 7 % (uint32_t)(n / 8));
        for (int i = 0; i < n; i++) {
            /* tones from the twiddle table: cos(2 pi f i / n) */
            int k1 = (f1 * i) % n, k2 = (f2 * i) % n;
            int32_t c1 = k1 < n / 2 ? tw_re[k1] : -tw_re[k1 - n / 2];
            int32_t c2 = k2 < n / 2 ? tw_re[k2] : -tw_re[k2 - n / 2];
            in_re[i] = (c1 >> 2) + (c2 >> 3) + (int32_t)(lcg_next() >> 26) - 32;
            re[i] = in_re[i];
            im[i] = 0;
        }
        fft(n, (int)log2n, 0);
        int32_t best1 = -1, best2 = -1;
        for (int i = 1; i < n / 2; i++) {
            int32_t m = (re[i] < 0 ? -re[i] : re[i]) + (im[i] < 0 ? -im[i] : im[i]);
            if (m > best1) {
                best2 = best1; peak2 = peak1;
                best1 = m; peak1 = i;
            } else if (m > best2) {
                best2 = m; peak2 = i;
            }
        }
        h = fnv1a(h, re, (uint32_t)n * 4);
        fft(n, (int)log2n, 1);
        for (int i = 0; i < n; i++) {
            int32_t back = re[i] << log2n; /* undo the 1/n scaling of the forward transform */
            int32_t d = back - in_re[i];
            err_total += d < 0 ? -d : d;
        }
        if (r < 3) printf("repeat %u: tones %d,%d peaks %d,%d\n", (unsigned)r, f1, f2, peak1, peak2);
    }
    printf("fft: n=%d repeats=%u spectrum_hash=%08x roundtrip_abs_err=%ld\n", n, (unsigned)repeats, (unsigned)h,
           (long)err_total);
    return 0;
}
