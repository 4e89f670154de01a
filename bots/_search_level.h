/* Endgame database levels in memory: the two file formats, the probe, and format v2's encoder and decoder;
   included by _search.c only (the twin of every function is in bots/pysearch.py).

   v1: one signed byte per rank (the value).
   v2: a header of V2_HEADER bytes (parsed here: magic, version, sizes; the rest is checked by bots/egdb.py), then
   blocks of 64 bytes (one cache line) for V2_CODES consecutive ranks each, then one 8-byte word per group of
   V2_GROUP blocks, then one byte per exception.
   A value v of level k is stored as u = (v + k) >> shift (shift 1 when every value of the level has k's parity,
   as when all seeds end in the stores), and u as a 4-bit code relative to a prediction: the block's base (a
   signed byte) plus the level's predictor for the board's count of empty houses on each side (a table of
   (h+1)^2 bytes in the header). Code 15 is an escape: u is then the block's next exception byte, found from
   the group's first exception (its word), the exceptions of the group's earlier blocks (bytes 1-2 of the
   block) and the escapes before it in the block. Block: byte 0 base, bytes 1-2 (little-endian) the exceptions
   of the group before it, bytes 3..63 the codes, low nibble first. */

#define V2_HEADER 512
#define V2_CODES 122   /* codes in a block (61 bytes) */
#define V2_GROUP 512   /* blocks per group: at most 511 * 122 exceptions before a block fit 16 bits */
#define V2_ESCAPE 15
static const char V2_MAGIC[8] = {'K', 'A', 'L', 'A', 'H', 'E', 'G', 'D'};

static inline uint64_t rd64(const uint8_t *p) {
    uint64_t x;
    memcpy(&x, p, 8);
    return x;  /* little-endian machines only (checked at import) */
}

static inline uint64_t v2_blocks(uint64_t positions) { return (positions + V2_CODES - 1) / V2_CODES; }
static inline uint64_t v2_groups(uint64_t blocks) { return (blocks + V2_GROUP - 1) / V2_GROUP; }

/* Empty houses of the mover (times h + 1) plus those of the opponent: the predictor's index. */
static inline int empties_index(int h, const int16_t *b) {
    int em = 0, eo = 0;
    for (int i = 0; i < h; i++) { em += !b[i]; eo += !b[i + h + 1]; }
    return em * (h + 1) + eo;
}

/* Fill `L` from a level's bytes (v1 or v2) of h houses and k seeds; -1 with a message in `why` if it is
   neither. */
static int level_parse(Level *L, const uint8_t *buf, uint64_t len, int h, int k, char *why, size_t whylen) {
    const uint64_t positions = binom[k + 2 * h - 1][2 * h - 1];
    memset(L, 0, sizeof *L);
    L->h = h; L->k = k;
    if (len >= V2_HEADER && !memcmp(buf, V2_MAGIC, 8)) {
        uint32_t version, header, group;
        memcpy(&version, buf + 8, 4); memcpy(&header, buf + 12, 4); memcpy(&group, buf + 20, 4);
        const uint64_t blocks = v2_blocks(positions), groups = v2_groups(blocks);
        const uint64_t exc = rd64(buf + 48);
        if (version != 2 || header != V2_HEADER || buf[16] != h || buf[17] != k || buf[18] > 1 ||
            buf[19] != V2_CODES || group != V2_GROUP || rd64(buf + 24) != positions || rd64(buf + 32) != blocks ||
            rd64(buf + 40) != groups || rd64(buf + 56) != len || exc > positions ||
            V2_HEADER + blocks * 64 + groups * 8 + exc != len) {
            snprintf(why, whylen, "level %d: a format v2 header that does not match its size or level", k);
            return -1;
        }
        L->shift = buf[18];
        memcpy(L->pred, buf + 128, (size_t)(h + 1) * (h + 1));
        L->blocks = buf + V2_HEADER;
        L->groups = buf + V2_HEADER + blocks * 64;
        L->exc = L->groups + groups * 8;
        L->nexc = exc;
        return 0;
    }
    if (len != positions) {
        snprintf(why, whylen, "database level %d has %llu bytes, expected %llu", k, (unsigned long long)len,
                 (unsigned long long)positions);
        return -1;
    }
    L->raw = (const int8_t *)buf;
    return 0;
}

/* The address a probe of rank r reads first (to prefetch). */
static inline const void *level_addr(const Level *L, uint64_t r) {
    if (L->raw) return L->raw + r;
    return L->blocks + (r / V2_CODES) * 64;
}

/* Escape codes (nibbles 15) in a little-endian word of 16 codes, one bit each (bit 4i for code i). */
static inline uint64_t escapes_of(uint64_t w) {
    return w & (w >> 1) & (w >> 2) & (w >> 3) & 0x1111111111111111ULL;
}

/* u of the escape at slot s of block `blk` (rare: 1% of the positions of Kalah(6,n)'s level 28 are exceptions).
   The escapes before it are counted 16 codes at a time; the last word read may reach 3 bytes into what follows
   the block, always inside the file (the group words follow the blocks), and is masked. */
static uint64_t v2_exception(const Level *L, uint64_t blk, const uint8_t *line, unsigned s) {
    uint64_t at = rd64(L->groups + (blk / V2_GROUP) * 8) + (uint64_t)(line[1] | line[2] << 8);
    unsigned q = 0;
    for (; 16 * (q + 1) <= s; q++) at += (uint64_t)__builtin_popcountll(escapes_of(rd64(line + 3 + 8 * q)));
    if (s % 16)
        at += (uint64_t)__builtin_popcountll(escapes_of(rd64(line + 3 + 8 * q)) & ((1ULL << (4 * (s % 16))) - 1));
    if (at >= L->nexc) return 0;  /* a damaged table reads a wrong value, never out of bounds */
    return L->exc[at];
}

/* The value of rank r in level L, the board's empties index being e (`rank_empties`; v1 levels need none): one
   cache line read, plus the exception for an escape. */
static inline int level_value(const Level *L, uint64_t r, int e) {
    if (L->raw) return L->raw[r];
    const uint64_t blk = r / V2_CODES;
    const unsigned s = (unsigned)(r - blk * V2_CODES);
    const uint8_t *line = L->blocks + blk * 64;
    const int c = (line[3 + (s >> 1)] >> ((s & 1) << 2)) & 15;
    int u;
    if (__builtin_expect(c != V2_ESCAPE, 1)) u = (int8_t)line[0] + c + L->pred[e];
    else u = (int)v2_exception(L, blk, line, s);
    return (u << L->shift) - L->k;
}

/* ---------------------------------------------------------------- whole levels (encoding, decoding) */

/* Walks the ranks of a level in order with their boards (stores zero). */
typedef struct {
    int h, k, m;
    int bars[MAXP];
    int16_t b[MAXP];
} Walk;

static void walk_start(Walk *w, int h, int k) {
    w->h = h; w->k = k; w->m = 2 * h;
    for (int j = 0; j < w->m - 1; j++) w->bars[j] = j;
}

static void walk_board(Walk *w) {
    const int h = w->h, m = w->m;
    int prev = -1;
    for (int j = 0; j < m; j++) {
        int p = j < m - 1 ? w->bars[j] : w->k + m - 1;
        w->b[j < h ? j : j + 1] = (int16_t)(p - prev - 1);
        prev = p;
    }
    w->b[h] = w->b[m + 1] = 0;
}

static void walk_next(Walk *w) {
    int j = 0;
    while (j < w->m - 2 && w->bars[j] + 1 == w->bars[j + 1]) j++;
    w->bars[j]++;
    for (int i = 0; i < j; i++) w->bars[i] = i;
}

/* The level's shift and predictor from its values (one byte per rank): shift 1 when every value has k's
   parity; the predictor of each empties index the rounded mean u of its positions (0 where there are none).
   Returns -1 if a value is out of -k..k. */
static int v2_model(int h, int k, const int8_t *values, uint64_t positions, int *shift, uint8_t *pred) {
    uint64_t sum[(MAXH + 1) * (MAXH + 1)] = {0}, cnt[(MAXH + 1) * (MAXH + 1)] = {0};
    int odd = 0;
    for (uint64_t r = 0; r < positions; r++) {
        int v = values[r];
        if (v < -k || v > k) return -1;
        odd |= (v + k) & 1;
    }
    *shift = !odd;
    Walk w;
    walk_start(&w, h, k);
    for (uint64_t r = 0; r < positions; r++, walk_next(&w)) {
        if ((r & 0xFFFFF) == 0 && interrupted()) return -2;
        walk_board(&w);
        const int e = empties_index(h, w.b);
        sum[e] += (uint64_t)((values[r] + k) >> *shift);
        cnt[e]++;
    }
    for (int e = 0; e < (h + 1) * (h + 1); e++)
        pred[e] = cnt[e] ? (uint8_t)((2 * sum[e] + cnt[e]) / (2 * cnt[e])) : 0;
    return 0;
}

/* Encode a level's values into `out` (blocks, group words, exceptions: the file after its header), which has
   room for every position as an exception; returns the exceptions written. */
static uint64_t v2_encode(int h, int k, const int8_t *values, uint64_t positions, int shift, const uint8_t *pred,
                          uint8_t *out) {
    const uint64_t blocks = v2_blocks(positions), groups = v2_groups(blocks);
    uint8_t *gw = out + blocks * 64, *exc = gw + groups * 8;
    uint64_t nexc = 0, group_first = 0;
    int res[V2_CODES];
    Walk w;
    walk_start(&w, h, k);
    for (uint64_t blk = 0; blk < blocks; blk++) {
        if ((blk & 0xFFF) == 0 && interrupted()) return 0;
        const uint64_t r0 = blk * V2_CODES;
        const int n = positions - r0 < V2_CODES ? (int)(positions - r0) : V2_CODES;
        int hist[512] = {0};
        for (int i = 0; i < n; i++, walk_next(&w)) {
            walk_board(&w);
            res[i] = ((values[r0 + i] + k) >> shift) - pred[empties_index(h, w.b)];
            hist[res[i] + 256]++;
        }
        /* The base: the lowest start of a window of 15 residuals holding the most of them (within a signed byte). */
        int base = -128, got = 0;
        for (int d = 0; d < V2_ESCAPE; d++) got += hist[-128 + d + 256];
        for (int lo = -127, best = got; lo <= 127; lo++) {
            got += hist[lo + V2_ESCAPE - 1 + 256] - hist[lo - 1 + 256];
            if (got > best) { best = got; base = lo; }
        }
        if (blk % V2_GROUP == 0) {
            group_first = nexc;
            memcpy(gw + (blk / V2_GROUP) * 8, &nexc, 8);
        }
        uint8_t *line = out + blk * 64;
        const uint64_t before = nexc - group_first;
        line[0] = (uint8_t)(int8_t)base;
        line[1] = (uint8_t)(before & 0xFF);
        line[2] = (uint8_t)(before >> 8);
        memset(line + 3, 0, 61);
        for (int i = 0; i < n; i++) {
            int c = res[i] - base;
            if (c < 0 || c >= V2_ESCAPE) {
                c = V2_ESCAPE;
                exc[nexc++] = (uint8_t)((values[r0 + i] + k) >> shift);
            }
            line[3 + (i >> 1)] |= (uint8_t)(c << ((i & 1) << 2));
        }
    }
    return nexc;
}

/* Every value of a level (any format) into `out`, one signed byte per rank. */
static int level_decode(const Level *L, uint64_t positions, int8_t *out) {
    Walk w;
    walk_start(&w, L->h, L->k);
    for (uint64_t r = 0; r < positions; r++, walk_next(&w)) {
        if ((r & 0xFFFFF) == 0 && interrupted()) return -1;
        if (L->raw) { out[r] = L->raw[r]; continue; }
        walk_board(&w);
        out[r] = (int8_t)level_value(L, r, empties_index(L->h, w.b));
    }
    return 0;
}
