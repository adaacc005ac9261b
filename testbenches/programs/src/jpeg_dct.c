/* jpeg_dct (consumer): a JPEG-like encoder of an image generated in code: 8x8 integer DCT
   (separable, 13-bit fixed-point cosines), quantization with the JPEG luminance table,
   zig-zag scan, (run, size) symbols, a Huffman code built from the symbol frequencies, and
   bit packing of the codes plus the amplitude bits.
   Usage: jpeg_dct [width] [height]   (defaults 128 and 96; multiples of 8) */
#include <stdio.h>
#include <string.h>
#include "common.h"

static const int16_t cosq[8] = {8192, 8035, 7568, 6811, 5793, 4551, 3135, 1598}; /* cos(k pi/16) << 13 */
static const uint8_t quant[64] = {
    16, 11, 10, 16, 24, 40, 51, 61, 12, 12, 14, 19, 26, 58, 60, 55, 14, 13, 16, 24, 40, 57, 69, 56,
    14, 17, 22, 29, 51, 87, 80, 62, 18, 22, 37, 56, 68, 109, 103, 77, 24, 35, 55, 64, 81, 104, 113, 92,
    49, 64, 78, 87, 103, 121, 120, 101, 72, 92, 95, 98, 112, 100, 103, 99};

static int dct_cos(int k, int x)
{
    /* cos((2x + 1) k pi / 16) from the table of cos(j pi / 16), j in 0..7 */
    int j = ((2 * x + 1) * k) % 32;
    int sign = 1;
    if (j > 16) j = 32 - j;
    if (j > 8) {
        j = 16 - j;
        sign = -1;
    }
    return j == 8 ? 0 : sign * cosq[j];
}

static int zigzag[64];

static void make_zigzag(void)
{
    int i = 0;
    for (int s = 0; s < 15; s++) {
        for (int k = 0; k <= s; k++) {
            int r = (s & 1) ? k : s - k, c = s - r;
            if (r < 8 && c < 8) zigzag[i++] = r * 8 + c;
        }
    }
}

static void fdct(const int in[64], int out[64])
{
    int tmp[64];
    for (int r = 0; r < 8; r++)
        for (int u = 0; u < 8; u++) {
            int32_t s = 0;
            for (int x = 0; x < 8; x++) s += in[r * 8 + x] * dct_cos(u, x);
            tmp[r * 8 + u] = (u == 0 ? s * 5793 >> 13 : s) >> 13; /* C(0) = 1/sqrt(2) */
        }
    for (int u = 0; u < 8; u++)
        for (int v = 0; v < 8; v++) {
            int32_t s = 0;
            for (int y = 0; y < 8; y++) s += tmp[y * 8 + u] * dct_cos(v, y);
            out[v * 8 + u] = ((v == 0 ? s * 5793 >> 13 : s) >> 13) / 4;
        }
}

static int bit_size(int v)
{
    if (v < 0) v = -v;
    int n = 0;
    while (v) {
        n++;
        v >>= 1;
    }
    return n;
}

/* Symbols: (run << 4 | size), 0x00 = end of block, 0xF0 = run of 16 zeros, plus DC sizes
   0x100 + size. */
#define NSYM 0x110
static uint32_t freq[NSYM];
static uint8_t code_len[NSYM];
static uint32_t code_bits[NSYM];

static void build_huffman(void)
{
    /* Simple O(n^2) Huffman over the used symbols; parent links give the code lengths. */
    static uint32_t weight[2 * NSYM];
    static int parent[2 * NSYM], alive[2 * NSYM];
    int nodes = 0;
    int sym_node[NSYM];
    for (int s = 0; s < NSYM; s++) {
        sym_node[s] = -1;
        if (freq[s]) {
            sym_node[s] = nodes;
            weight[nodes] = freq[s];
            parent[nodes] = -1;
            alive[nodes] = 1;
            nodes++;
        }
    }
    int live = nodes;
    while (live > 1) {
        int a = -1, b = -1;
        for (int i = 0; i < nodes; i++) {
            if (!alive[i]) continue;
            if (a < 0 || weight[i] < weight[a]) {
                b = a;
                a = i;
            } else if (b < 0 || weight[i] < weight[b]) {
                b = i;
            }
        }
        weight[nodes] = weight[a] + weight[b];
        parent[nodes] = -1;
        alive[nodes] = 1;
        parent[a] = parent[b] = nodes;
        alive[a] = alive[b] = 0;
        nodes++;
        live--;
    }
    for (int s = 0; s < NSYM; s++) {
        int len = 0;
        for (int n = sym_node[s]; n >= 0 && parent[n] >= 0; n = parent[n]) len++;
        code_len[s] = (uint8_t)(sym_node[s] >= 0 && len == 0 ? 1 : len);
    }
    /* Canonical codes: by length, then by symbol. */
    uint32_t code = 0;
    for (int len = 1; len <= 32; len++) {
        for (int s = 0; s < NSYM; s++)
            if (code_len[s] == len) code_bits[s] = code++;
        code <<= 1;
    }
}

static uint8_t *out_buf;
static uint32_t out_pos, out_acc, out_n;

static void put_bits(uint32_t v, int n)
{
    for (int i = n - 1; i >= 0; i--) {
        out_acc = out_acc << 1 | ((v >> i) & 1);
        if (++out_n == 8) {
            out_buf[out_pos++] = (uint8_t)out_acc;
            out_acc = 0;
            out_n = 0;
        }
    }
}

static void emit(int sym, int value, int size, int pass)
{
    if (pass == 0) {
        freq[sym]++;
        return;
    }
    put_bits(code_bits[sym], code_len[sym]);
    if (size) put_bits((uint32_t)(value < 0 ? value - 1 : value) & ((1u << size) - 1), size);
}

int main(int argc, char **argv)
{
    uint32_t w = arg_u32(argc, argv, 1, 128) & ~7u, h = arg_u32(argc, argv, 2, 96) & ~7u;
    if (!w) w = 8;
    if (!h) h = 8;
    uint8_t *img = malloc(w * h);
    int16_t *coef = malloc(w * h * sizeof *coef);
    out_buf = malloc(w * h * 2 + 64);
    if (!img || !coef || !out_buf) {
        printf("jpeg_dct: out of memory\n");
        return 1;
    }
    make_zigzag();
    lcg_seed(640);
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++) {
            int dx = (int)x - (int)w / 2, dy = (int)y - (int)h / 2;
            int v = (int)(x * 255 / w) / 2 + ((dx * dx + dy * dy) % 1500 < 700 ? 80 : 0) + (int)(lcg_next() >> 28);
            img[y * w + x] = (uint8_t)(v > 255 ? 255 : v);
        }
    /* Transform and quantize every block. */
    for (uint32_t by = 0; by < h; by += 8)
        for (uint32_t bx = 0; bx < w; bx += 8) {
            int in[64], out[64];
            for (int i = 0; i < 64; i++) in[i] = img[(by + i / 8) * w + bx + i % 8] - 128;
            fdct(in, out);
            int16_t *c = &coef[(by / 8 * (w / 8) + bx / 8) * 64];
            for (int i = 0; i < 64; i++) {
                int q = quant[zigzag[i]];
                int v = out[zigzag[i]];
                c[i] = (int16_t)(v >= 0 ? (v + q / 2) / q : -((-v + q / 2) / q));
            }
        }
    /* Two passes: count symbols, then code them. */
    uint32_t blocks = (w / 8) * (h / 8), nonzero = 0;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) build_huffman();
        int prev_dc = 0;
        for (uint32_t b = 0; b < blocks; b++) {
            int16_t *c = &coef[b * 64];
            int diff = c[0] - prev_dc;
            prev_dc = c[0];
            emit(0x100 + bit_size(diff), diff, bit_size(diff), pass);
            int run = 0;
            for (int i = 1; i < 64; i++) {
                if (c[i] == 0) {
                    run++;
                    continue;
                }
                if (pass == 0) nonzero++;
                while (run > 15) {
                    emit(0xF0, 0, 0, pass);
                    run -= 16;
                }
                int s = bit_size(c[i]);
                emit(run << 4 | s, c[i], s, pass);
                run = 0;
            }
            if (run) emit(0x00, 0, 0, pass);
        }
    }
    put_bits(0x7F, 7); /* pad */
    uint32_t used = 0, maxlen = 0;
    for (int s = 0; s < NSYM; s++)
        if (freq[s]) {
            used++;
            if (code_len[s] > maxlen) maxlen = code_len[s];
        }
    printf("jpeg_dct: %ux%u blocks=%u nonzero=%u symbols=%u maxcode=%u bytes=%u hash=%08x\n", (unsigned)w, (unsigned)h,
           (unsigned)blocks, (unsigned)nonzero, (unsigned)used, (unsigned)maxlen, (unsigned)out_pos,
           (unsigned)fnv1a(FNV_INIT, out_buf, out_pos));
    return 0;
}
