/* adpcm (telecom): an IMA-ADPCM-style codec (4-bit codes, 89-step table, index
   adaptation) encoding a generated 16-bit signal and decoding it again. Built as Thumb.
   Usage: adpcm [samples]   (default 60000) */
#include <stdio.h>
#include "common.h"

static const int16_t step_table[89] = {
    7, 8, 9, 10, 11, 12, 13, 14, 16, 17, 19, 21, 23, 25, 28, 31, 34, 37, 41, 45, 50, 55, 60, 66, 73, 80, 88, 97,
    107, 118, 130, 143, 157, 173, 190, 209, 230, 253, 279, 307, 337, 371, 408, 449, 494, 544, 598, 658, 724, 796,
    876, 963, 1060, 1166, 1282, 1411, 1552, 1707, 1878, 2066, 2272, 2499, 2749, 3024, 3327, 3660, 4026, 4428, 4871,
    5358, 5894, 6484, 7132, 7845, 8630, 9493, 10442, 11487, 12635, 13899, 15289, 16818, 18500, 20350, 22385, 24623,
    27086, 29794, 32767};
static const int8_t index_table[16] = {-1, -1, -1, -1, 2, 4, 6, 8, -1, -1, -1, -1, 2, 4, 6, 8};

struct codec {
    int predicted;
    int index;
};

static int clamp16(int v) { return v > 32767 ? 32767 : v < -32768 ? -32768 : v; }

static int adapt(struct codec *st, int code)
{
    int step = step_table[st->index];
    int diff = step >> 3;
    if (code & 4) diff += step;
    if (code & 2) diff += step >> 1;
    if (code & 1) diff += step >> 2;
    st->predicted = clamp16(code & 8 ? st->predicted - diff : st->predicted + diff);
    st->index += index_table[code];
    if (st->index < 0) st->index = 0;
    if (st->index > 88) st->index = 88;
    return st->predicted;
}

static int encode(struct codec *st, int sample)
{
    int step = step_table[st->index];
    int diff = sample - st->predicted, code = 0;
    if (diff < 0) {
        code = 8;
        diff = -diff;
    }
    if (diff >= step) { code |= 4; diff -= step; }
    step >>= 1;
    if (diff >= step) { code |= 2; diff -= step; }
    step >>= 1;
    if (diff >= step) code |= 1;
    adapt(st, code);
    return code;
}

int main(int argc, char **argv)
{
    uint32_t n = arg_u32(argc, argv, 1, 60000);
    int16_t *pcm = malloc(n * sizeof *pcm);
    uint8_t *codes = malloc((n + 1) / 2);
    if (!pcm || !codes) {
        printf("adpcm: out of memory\n");
        return 1;
    }
    /* Triangle waves of two periods, an envelope, and noise. */
    lcg_seed(8000);
    int phase1 = 0, phase2 = 0;
    for (uint32_t i = 0; i < n; i++) {
        phase1 = (phase1 + 373) & 0xFFFF;
        phase2 = (phase2 + 1201) & 0xFFFF;
        int t1 = phase1 < 0x8000 ? phase1 - 0x4000 : 0xC000 - phase1;
        int t2 = phase2 < 0x8000 ? phase2 - 0x4000 : 0xC000 - phase2;
        int env = (int)((i >> 6) & 0xFF);
        int v = (t1 * env >> 8) + (t2 >> 2) + (int)(lcg_next() >> 23) - 256;
        pcm[i] = (int16_t)clamp16(v);
    }
    struct codec enc = {0, 0}, dec = {0, 0};
    for (uint32_t i = 0; i < n; i++) {
        int c = encode(&enc, pcm[i]);
        if (i & 1) codes[i / 2] |= (uint8_t)(c << 4);
        else codes[i / 2] = (uint8_t)c;
    }
    uint32_t h = fnv1a(FNV_INIT, codes, (n + 1) / 2);
    uint64_t err2 = 0;
    int32_t maxerr = 0;
    for (uint32_t i = 0; i < n; i++) {
        int c = (codes[i / 2] >> ((i & 1) * 4)) & 15;
        int v = adapt(&dec, c);
        int32_t d = v - pcm[i];
        if (d < 0) d = -d;
        if (d > maxerr) maxerr = d;
        err2 += (uint64_t)((int64_t)d * d);
    }
    printf("adpcm: samples=%u code_hash=%08x max_err=%d mean_sq_err=%u final_index=%d\n", (unsigned)n, (unsigned)h,
           (int)maxerr, (unsigned)(err2 / n), dec.index);
    free(pcm);
    free(codes);
    return 0;
}
