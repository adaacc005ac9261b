/* crc32 (telecom): CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320) of a file read with
   fopen/fread through semihosting, table-driven and bit by bit; the check value of
   "123456789" is verified first.
   Usage: crc32 [file] [repeats]   (defaults data/lorem.txt and 12) */
#include <stdio.h>
#include <string.h>
#include "common.h"

static uint32_t table[256];

static void make_table(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        table[i] = c;
    }
}

static uint32_t crc_table(uint32_t crc, const uint8_t *p, size_t n)
{
    crc = ~crc;
    while (n--) crc = table[(crc ^ *p++) & 0xFF] ^ (crc >> 8);
    return ~crc;
}

static uint32_t crc_bitwise(uint32_t crc, const uint8_t *p, size_t n)
{
    crc = ~crc;
    while (n--) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1)));
    }
    return ~crc;
}

int main(int argc, char **argv)
{
    const char *name = argc > 1 ? argv[1] : "data/lorem.txt";
    uint32_t repeats = arg_u32(argc, argv, 2, 12);
    make_table();
    uint32_t check = crc_table(0, (const uint8_t *)"123456789", 9);
    printf("crc32(\"123456789\") = %08x (%s)\n", (unsigned)check, check == 0xCBF43926u ? "ok" : "FAILED");
    uint32_t crc_t = 0, crc_b = 0, bytes = 0;
    uint8_t buf[512];
    for (uint32_t r = 0; r < repeats; r++) {
        FILE *f = fopen(name, "rb");
        if (!f) {
            printf("crc32: cannot open %s\n", name);
            return 2;
        }
        size_t n;
        uint32_t c = 0, cb = 0;
        bytes = 0;
        while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
            c = crc_table(c, buf, n);
            if (r == 0) cb = crc_bitwise(cb, buf, n);
            bytes += (uint32_t)n;
        }
        fclose(f);
        if (r == 0) crc_b = cb;
        crc_t ^= c + r;
        if (r == 0 && c != cb) printf("crc32: table and bitwise disagree\n");
    }
    printf("crc32: file=%s bytes=%u crc=%08x mix=%08x repeats=%u\n", name, (unsigned)bytes, (unsigned)crc_b, (unsigned)crc_t,
           (unsigned)repeats);
    return check != 0xCBF43926u;
}
