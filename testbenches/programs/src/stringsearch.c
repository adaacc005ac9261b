/* stringsearch (office): Boyer-Moore-Horspool search of a list of patterns in a text made
   of generated words; counts every occurrence and checks the first ones against a naive
   search. Built as Thumb.
   Usage: stringsearch [text kilobytes] [extra pattern ...]   (default 48) */
#include <stdio.h>
#include <string.h>
#include "common.h"

static const char *const syllables[] = {"the", "ar", "en", "stream", "o", "ca", "che", "tr", "ace", "de", "ri", "va",
                                        "ti", "on", "pro", "gram", "mi", "bench", "x", "sc", "ale"};
#define NSYL (sizeof syllables / sizeof syllables[0])

static const char *const patterns[] = {"stream", "trace", "cache", "benchmark", "the program", "deri", "ontrace",
                                       "zebra", "ale sc", "provati", "x x", "qq"};
#define NPAT (sizeof patterns / sizeof patterns[0])

static size_t bmh_count(const char *text, size_t n, const char *pat, size_t m, size_t *first)
{
    size_t skip[256];
    size_t count = 0;
    *first = (size_t)-1;
    if (m == 0 || m > n) return 0;
    for (int i = 0; i < 256; i++) skip[i] = m;
    for (size_t i = 0; i + 1 < m; i++) skip[(unsigned char)pat[i]] = m - 1 - i;
    size_t pos = 0;
    while (pos + m <= n) {
        size_t j = m - 1;
        while (text[pos + j] == pat[j]) {
            if (j == 0) {
                if (!count) *first = pos;
                count++;
                break;
            }
            j--;
        }
        pos += skip[(unsigned char)text[pos + m - 1]];
    }
    return count;
}

static size_t naive_first(const char *text, size_t n, const char *pat, size_t m)
{
    for (size_t i = 0; i + m <= n; i++)
        if (memcmp(text + i, pat, m) == 0) return i;
    return (size_t)-1;
}

int main(int argc, char **argv)
{
    uint32_t kb = arg_u32(argc, argv, 1, 48);
    size_t n = (size_t)kb * 1024;
    char *text = malloc(n + 1);
    if (!text) {
        printf("stringsearch: out of memory\n");
        return 1;
    }
    lcg_seed(4242);
    size_t len = 0;
    while (len < n) {
        int syl = 1 + (int)lcg_below(3);
        for (int s = 0; s < syl && len < n; s++) {
            const char *p = syllables[lcg_below(NSYL)];
            while (*p && len < n) text[len++] = *p++;
        }
        if (len < n) text[len++] = lcg_below(16) == 0 ? '\n' : ' ';
    }
    text[n] = 0;
    uint32_t total = 0, bad = 0;
    int extra = argc > 2 ? argc - 2 : 0;
    for (int k = 0; k < (int)NPAT + extra; k++) {
        const char *pat = k < (int)NPAT ? patterns[k] : argv[2 + k - NPAT];
        size_t m = strlen(pat), first;
        size_t c = bmh_count(text, n, pat, m, &first);
        if (first != naive_first(text, first == (size_t)-1 ? n : first + m, pat, m)) bad++;
        printf("%-12s %6u first=%d\n", pat, (unsigned)c, first == (size_t)-1 ? -1 : (int)first);
        total += (uint32_t)c;
    }
    printf("stringsearch: kilobytes=%u matches=%u mismatches=%u\n", (unsigned)kb, (unsigned)total, (unsigned)bad);
    free(text);
    return bad != 0;
}
