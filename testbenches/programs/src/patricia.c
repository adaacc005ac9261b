/* patricia (network): a Patricia tree (path-compressed binary trie) of IPv4 prefixes with
   longest-prefix-match lookups of random addresses.
   Usage: patricia [lookups] [prefixes]   (defaults 30000 and 1500) */
#include <stdio.h>
#include "common.h"

/* A node tests bit `bit` (31 = most significant) of the key; `key`/`len` is the prefix the
   node stands for. Internal (glue) nodes have has_value == 0. */
struct node {
    uint32_t key;
    int len;
    int bit;
    int has_value;
    uint32_t value;
    struct node *child[2];
};

static uint32_t mask_of(int len) { return len == 0 ? 0 : 0xFFFFFFFFu << (32 - len); }

static int bit_at(uint32_t key, int len) { return (int)((key >> (31 - len)) & 1); }

static struct node *new_node(uint32_t key, int len)
{
    struct node *n = calloc(1, sizeof *n);
    if (!n) {
        printf("patricia: out of memory\n");
        exit(1);
    }
    n->key = key & mask_of(len);
    n->len = len;
    return n;
}

/* Length of the common prefix of a/alen and b/blen. */
static int common_len(uint32_t a, int alen, uint32_t b, int blen)
{
    int m = alen < blen ? alen : blen;
    uint32_t diff = (a ^ b) & mask_of(m);
    int n = 0;
    while (n < m && !(diff & (0x80000000u >> n))) n++;
    return n;
}

static struct node *root;
static int nodes_made;

static void insert(uint32_t key, int len, uint32_t value)
{
    key &= mask_of(len);
    struct node **link = &root;
    for (;;) {
        struct node *n = *link;
        if (!n) {
            n = new_node(key, len);
            n->has_value = 1;
            n->value = value;
            *link = n;
            nodes_made++;
            return;
        }
        int c = common_len(key, len, n->key, n->len);
        if (c == n->len && c == len) {
            n->has_value = 1;
            n->value = value;
            return;
        }
        if (c == n->len) {
            link = &n->child[bit_at(key, n->len)];
            continue;
        }
        /* Split: a new node for the common prefix takes n's place. */
        struct node *glue = new_node(key, c);
        nodes_made++;
        glue->child[bit_at(n->key, c)] = n;
        *link = glue;
        if (c == len) {
            glue->has_value = 1;
            glue->value = value;
        } else {
            struct node *leaf = new_node(key, len);
            nodes_made++;
            leaf->has_value = 1;
            leaf->value = value;
            glue->child[bit_at(key, c)] = leaf;
        }
        return;
    }
}

/* Longest prefix match; returns 1 and the value if any prefix matches. */
static int lookup(uint32_t addr, uint32_t *value, int *len)
{
    int found = 0;
    for (struct node *n = root; n; ) {
        if ((addr & mask_of(n->len)) != n->key) break;
        if (n->has_value) {
            found = 1;
            *value = n->value;
            *len = n->len;
        }
        if (n->len == 32) break;
        n = n->child[bit_at(addr, n->len)];
    }
    return found;
}

int main(int argc, char **argv)
{
    uint32_t lookups = arg_u32(argc, argv, 1, 30000);
    uint32_t prefixes = arg_u32(argc, argv, 2, 1500);
    lcg_seed(99);
    for (uint32_t i = 0; i < prefixes; i++) {
        /* Cluster the prefixes under a few /8s so that the tree has depth. */
        uint32_t key = (10u + lcg_below(6)) << 24 | (lcg_next() >> 8);
        int len = 8 + (int)lcg_below(25);
        insert(key, len, i + 1);
    }
    insert(0, 0, 0x7FFFFFFF); /* default route */
    uint32_t hits = 0, sum = 0, sumlen = 0, h = FNV_INIT;
    for (uint32_t i = 0; i < lookups; i++) {
        uint32_t addr = (i & 1) ? ((10u + lcg_below(6)) << 24 | (lcg_next() >> 8)) : lcg_next();
        uint32_t v = 0;
        int len = 0;
        if (lookup(addr, &v, &len) && v != 0x7FFFFFFF) {
            hits++;
            sum += v;
            sumlen += (uint32_t)len;
        }
        h = fnv1a(h, &v, 4);
    }
    printf("patricia: prefixes=%u nodes=%d lookups=%u hits=%u sum=%u lensum=%u hash=%08x\n", (unsigned)prefixes, nodes_made,
           (unsigned)lookups, (unsigned)hits, (unsigned)sum, (unsigned)sumlen, (unsigned)h);
    return 0;
}
