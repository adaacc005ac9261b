/* qsort_structs (automotive): newlib's qsort over an array of structs, first by squared
   distance from the origin, then by a generated name with strcmp.
   Usage: qsort_structs [count]   (default 6000) */
#include <stdio.h>
#include <string.h>
#include "common.h"

struct point {
    int x, y, z;
    uint32_t id;
    char name[12];
};

static int32_t dist2(const struct point *p) { return p->x * p->x + p->y * p->y + p->z * p->z; }

static int by_distance(const void *a, const void *b)
{
    const struct point *p = a, *q = b;
    int32_t da = dist2(p), db = dist2(q);
    if (da != db) return da < db ? -1 : 1;
    return p->id < q->id ? -1 : p->id > q->id;
}

static int by_name(const void *a, const void *b)
{
    const struct point *p = a, *q = b;
    int c = strcmp(p->name, q->name);
    if (c) return c;
    return p->id < q->id ? -1 : p->id > q->id;
}

int main(int argc, char **argv)
{
    static const char syll[8][3] = {"ka", "to", "mi", "re", "su", "no", "ha", "yu"};
    uint32_t n = arg_u32(argc, argv, 1, 6000);
    struct point *v = malloc(n * sizeof *v);
    if (!v) {
        printf("qsort_structs: out of memory\n");
        return 1;
    }
    lcg_seed(7);
    for (uint32_t i = 0; i < n; i++) {
        v[i].x = (int)lcg_below(2001) - 1000;
        v[i].y = (int)lcg_below(2001) - 1000;
        v[i].z = (int)lcg_below(2001) - 1000;
        v[i].id = i;
        unsigned len = 2 + lcg_below(4);
        char *s = v[i].name;
        for (unsigned k = 0; k < len; k++) {
            memcpy(s, syll[lcg_below(8)], 2);
            s += 2;
        }
        *s = 0;
    }
    qsort(v, n, sizeof *v, by_distance);
    uint32_t h1 = FNV_INIT, bad = 0;
    for (uint32_t i = 0; i < n; i++) {
        h1 = fnv1a(h1, &v[i].id, 4);
        if (i && by_distance(&v[i - 1], &v[i]) > 0) bad++;
    }
    printf("nearest id=%u d2=%d farthest id=%u d2=%d\n", (unsigned)v[0].id, (int)dist2(&v[0]), (unsigned)v[n - 1].id,
           (int)dist2(&v[n - 1]));
    qsort(v, n, sizeof *v, by_name);
    uint32_t h2 = FNV_INIT;
    for (uint32_t i = 0; i < n; i++) {
        h2 = fnv1a(h2, &v[i].id, 4);
        if (i && by_name(&v[i - 1], &v[i]) > 0) bad++;
    }
    printf("first name=%s last name=%s\n", v[0].name, v[n - 1].name);
    printf("qsort_structs: n=%u hash_dist=%08x hash_name=%08x unsorted=%u\n", (unsigned)n, (unsigned)h1, (unsigned)h2,
           (unsigned)bad);
    free(v);
    return bad != 0;
}
