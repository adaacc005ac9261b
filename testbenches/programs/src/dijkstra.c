/* dijkstra (network): shortest paths on a fixed random graph (adjacency matrix from the LCG),
   with a malloc'ed linked-list queue in the style of MiBench's dijkstra. Built as Thumb.
   Usage: dijkstra [pairs] [nodes]   (defaults 24 and 80) */
#include <stdio.h>
#include "common.h"

#define MAX_NODES 200
#define NONE 9999

struct qitem {
    int node, dist, prev;
    struct qitem *next;
};

static int adj[MAX_NODES][MAX_NODES];
static int dist_of[MAX_NODES], prev_of[MAX_NODES];
static struct qitem *qhead;
static int qlen;

static void enqueue(int node, int dist, int prev)
{
    struct qitem *q = malloc(sizeof *q);
    if (!q) {
        printf("dijkstra: out of memory\n");
        exit(1);
    }
    q->node = node;
    q->dist = dist;
    q->prev = prev;
    q->next = 0;
    if (!qhead) {
        qhead = q;
    } else {
        struct qitem *t = qhead;
        while (t->next) t = t->next;
        t->next = q;
    }
    qlen++;
}

static void dequeue(int *node, int *dist, int *prev)
{
    struct qitem *q = qhead;
    *node = q->node;
    *dist = q->dist;
    *prev = q->prev;
    qhead = q->next;
    free(q);
    qlen--;
}

/* Returns the path length from a to b and its hop count in *hops. */
static int shortest(int nodes, int a, int b, int *hops)
{
    for (int i = 0; i < nodes; i++) {
        dist_of[i] = NONE;
        prev_of[i] = NONE;
    }
    dist_of[a] = 0;
    enqueue(a, 0, NONE);
    while (qlen > 0) {
        int node, dist, prev;
        dequeue(&node, &dist, &prev);
        for (int i = 0; i < nodes; i++) {
            int w = adj[node][i];
            if (w != NONE && (dist_of[i] == NONE || dist_of[i] > w + dist)) {
                dist_of[i] = dist + w;
                prev_of[i] = node;
                enqueue(i, dist + w, node);
            }
        }
    }
    int h = 0;
    for (int n = b; n != a && n != NONE; n = prev_of[n]) h++;
    *hops = h;
    return dist_of[b];
}

int main(int argc, char **argv)
{
    uint32_t pairs = arg_u32(argc, argv, 1, 24);
    uint32_t nodes = arg_u32(argc, argv, 2, 80);
    if (nodes > MAX_NODES) nodes = MAX_NODES;
    lcg_seed(2024);
    for (uint32_t i = 0; i < nodes; i++)
        for (uint32_t j = 0; j < nodes; j++)
            adj[i][j] = (i == j) ? NONE : (lcg_below(100) < 30 ? (int)(1 + lcg_below(99)) : NONE);
    uint32_t total = 0, total_hops = 0, h = FNV_INIT;
    for (uint32_t p = 0; p < pairs; p++) {
        int a = (int)(p % nodes), b = (int)((p * 37 + nodes / 2) % nodes), hops;
        int d = shortest((int)nodes, a, b, &hops);
        if (p < 4) printf("path %d -> %d: length %d, %d hops\n", a, b, d, hops);
        total += (uint32_t)d;
        total_hops += (uint32_t)hops;
        h = fnv1a(h, &d, sizeof d);
    }
    printf("dijkstra: pairs=%u nodes=%u total=%u hops=%u hash=%08x\n", (unsigned)pairs, (unsigned)nodes, (unsigned)total,
           (unsigned)total_hops, (unsigned)h);
    return 0;
}
