/* aes (security): AES-128 from FIPS-197. The S-boxes are computed at start-up (inverse in
   GF(2^8) and the affine map); the FIPS-197 appendix C.1 vector is checked, then a generated
   buffer is encrypted in CBC mode, decrypted again and compared.
   Usage: aes [blocks]   (default 400) */
#include <stdio.h>
#include <string.h>
#include "common.h"

static uint8_t sbox[256], inv_sbox[256];

static uint8_t xtime(uint8_t x) { return (uint8_t)((x << 1) ^ ((x & 0x80) ? 0x1B : 0)); }

static uint8_t gmul(uint8_t a, uint8_t b)
{
    uint8_t p = 0;
    while (b) {
        if (b & 1) p ^= a;
        a = xtime(a);
        b >>= 1;
    }
    return p;
}

static uint8_t rotl8(uint8_t x, int s) { return (uint8_t)((x << s) | (x >> (8 - s))); }

static void make_sboxes(void)
{
    /* Walk the multiplicative group with generator 3: p = 3^i, q = 3^-i. */
    uint8_t p = 1, q = 1;
    do {
        p = p ^ xtime(p);          /* p *= 3 */
        q ^= q << 1;               /* q /= 3 */
        q ^= q << 2;
        q ^= q << 4;
        if (q & 0x80) q ^= 0x09;
        uint8_t s = q ^ rotl8(q, 1) ^ rotl8(q, 2) ^ rotl8(q, 3) ^ rotl8(q, 4);
        sbox[p] = s ^ 0x63;
    } while (p != 1);
    sbox[0] = 0x63;
    for (int i = 0; i < 256; i++) inv_sbox[sbox[i]] = (uint8_t)i;
}

static uint8_t round_key[176];

static void expand_key(const uint8_t key[16])
{
    uint8_t rcon = 1;
    memcpy(round_key, key, 16);
    for (int i = 4; i < 44; i++) {
        uint8_t t[4];
        memcpy(t, &round_key[(i - 1) * 4], 4);
        if (i % 4 == 0) {
            uint8_t u = t[0];
            t[0] = sbox[t[1]] ^ rcon;
            t[1] = sbox[t[2]];
            t[2] = sbox[t[3]];
            t[3] = sbox[u];
            rcon = xtime(rcon);
        }
        for (int j = 0; j < 4; j++) round_key[i * 4 + j] = round_key[(i - 4) * 4 + j] ^ t[j];
    }
}

static void add_round_key(uint8_t s[16], int round)
{
    for (int i = 0; i < 16; i++) s[i] ^= round_key[round * 16 + i];
}

/* State layout: s[4 * column + row]. */
static void shift_rows(uint8_t s[16], int inverse)
{
    uint8_t t[16];
    for (int c = 0; c < 4; c++)
        for (int r = 0; r < 4; r++) {
            int from = inverse ? (c - r + 4) % 4 : (c + r) % 4;
            t[4 * c + r] = s[4 * from + r];
        }
    memcpy(s, t, 16);
}

static void mix_columns(uint8_t s[16])
{
    for (int c = 0; c < 4; c++) {
        uint8_t *a = &s[4 * c];
        uint8_t all = a[0] ^ a[1] ^ a[2] ^ a[3], a0 = a[0];
        a[0] ^= all ^ xtime(a[0] ^ a[1]);
        a[1] ^= all ^ xtime(a[1] ^ a[2]);
        a[2] ^= all ^ xtime(a[2] ^ a[3]);
        a[3] ^= all ^ xtime(a[3] ^ a0);
    }
}

static void inv_mix_columns(uint8_t s[16])
{
    for (int c = 0; c < 4; c++) {
        uint8_t *a = &s[4 * c], b[4];
        for (int r = 0; r < 4; r++)
            b[r] = gmul(a[r], 14) ^ gmul(a[(r + 1) % 4], 11) ^ gmul(a[(r + 2) % 4], 13) ^ gmul(a[(r + 3) % 4], 9);
        memcpy(a, b, 4);
    }
}

static void encrypt_block(uint8_t s[16])
{
    add_round_key(s, 0);
    for (int round = 1; round <= 10; round++) {
        for (int i = 0; i < 16; i++) s[i] = sbox[s[i]];
        shift_rows(s, 0);
        if (round != 10) mix_columns(s);
        add_round_key(s, round);
    }
}

static void decrypt_block(uint8_t s[16])
{
    add_round_key(s, 10);
    for (int round = 9; round >= 0; round--) {
        shift_rows(s, 1);
        for (int i = 0; i < 16; i++) s[i] = inv_sbox[s[i]];
        add_round_key(s, round);
        if (round != 0) inv_mix_columns(s);
    }
}

static void hex(const char *label, const uint8_t *b, int n)
{
    printf("%s", label);
    for (int i = 0; i < n; i++) printf("%02x", b[i]);
    printf("\n");
}

int main(int argc, char **argv)
{
    uint32_t blocks = arg_u32(argc, argv, 1, 400);
    make_sboxes();
    /* FIPS-197 appendix C.1 */
    uint8_t key[16], block[16];
    for (int i = 0; i < 16; i++) {
        key[i] = (uint8_t)i;
        block[i] = (uint8_t)(i * 0x11);
    }
    expand_key(key);
    encrypt_block(block);
    hex("fips197 c.1: ", block, 16);
    static const uint8_t expect[16] = {0x69, 0xc4, 0xe0, 0xd8, 0x6a, 0x7b, 0x04, 0x30,
                                       0xd8, 0xcd, 0xb7, 0x80, 0x70, 0xb4, 0xc5, 0x5a};
    int ok = memcmp(block, expect, 16) == 0;
    decrypt_block(block);
    for (int i = 0; i < 16; i++) ok &= block[i] == (uint8_t)(i * 0x11);

    uint8_t *plain = malloc(blocks * 16), *data = malloc(blocks * 16);
    if (!plain || !data) {
        printf("aes: out of memory\n");
        return 1;
    }
    lcg_seed(0xAE5);
    for (uint32_t i = 0; i < blocks * 16; i++) plain[i] = (uint8_t)(lcg_next() >> 24);
    for (int i = 0; i < 16; i++) key[i] = (uint8_t)(lcg_next() >> 24);
    expand_key(key);
    uint8_t iv[16] = {0}, chain[16];
    memcpy(data, plain, blocks * 16);
    memcpy(chain, iv, 16);
    for (uint32_t b = 0; b < blocks; b++) {
        uint8_t *s = &data[b * 16];
        for (int i = 0; i < 16; i++) s[i] ^= chain[i];
        encrypt_block(s);
        memcpy(chain, s, 16);
    }
    uint32_t h = fnv1a(FNV_INIT, data, blocks * 16);
    hex("last block: ", &data[(blocks - 1) * 16], 16);
    for (uint32_t b = blocks; b-- > 0;) {
        uint8_t *s = &data[b * 16];
        decrypt_block(s);
        const uint8_t *prev = b ? &data[(b - 1) * 16] : iv;
        for (int i = 0; i < 16; i++) s[i] ^= prev[i];
    }
    ok &= memcmp(data, plain, blocks * 16) == 0;
    printf("aes: blocks=%u cipher_hash=%08x roundtrip=%s\n", (unsigned)blocks, (unsigned)h, ok ? "ok" : "FAILED");
    return !ok;
}
