/* Alpha-beta search and endgame database construction; included by _search.c only. */

static inline void make_key(const RulesObject *R, const int16_t *b, uint64_t *k1, uint64_t *k2) {
    const int h = R->h, n = R->n;
    if (R->packed) {
        uint64_t lo = 0, hi = 0;
        int shift = 0;
        for (int i = 0; i < n; i++) {
            if ((i == h || i == n - 1) && !R->majority) continue;
            uint64_t v = (uint64_t)b[i];
            if (shift < 64) {
                lo |= v << shift;
                if (shift + R->bits > 64) hi |= v >> (64 - shift);
            } else {
                hi |= v << (shift - 64);
            }
            shift += R->bits;
        }
        *k1 = lo; *k2 = hi;
    } else {
        uint64_t a = 0x9E3779B97F4A7C15ULL, c = 0xC2B2AE3D27D4EB4FULL;
        for (int i = 0; i < n; i++) {
            if ((i == h || i == n - 1) && !R->majority) continue;
            a = (a ^ (uint64_t)(b[i] + 1)) * 0x100000001B3ULL; a ^= a >> 29;
            c = (c + (uint64_t)(b[i] + 7)) * 0xFF51AFD7ED558CCDULL; c ^= c >> 31;
        }
        *k1 = a; *k2 = c;
    }
}

/* Two tables: positions within NEAR_SEEDS seeds of the databases (the most numerous, and cheap
   to search again) go to a small table that stays in the processor's caches; the others to
   the main table, whose probes mostly miss the caches. */
static inline int near_db(const SearcherObject *S, int k) { return k <= S->egdb_max + NEAR_SEEDS; }

static inline Entry *tt_bucket(SearcherObject *S, uint64_t k1, uint64_t k2, int near) {
    uint64_t x = k1 * 0x9E3779B97F4A7C15ULL ^ (k2 + 0x632BE59BD9B4E019ULL) * 0xC2B2AE3D27D4EB4FULL;
    x ^= x >> 32;
    if (near) return &S->tt[S->mask + 1 + ((x & S->near_mask) & ~1ULL)];
    return &S->tt[(x & S->mask) & ~1ULL];
}

#define USED_BIT (1ULL << 56)
static inline uint64_t mix_d(uint64_t d) { return d * 0x9E3779B97F4A7C15ULL + 0x632BE59BD9B4E019ULL; }

static inline uint64_t slot_pack(const Slot *s) {
    return (uint64_t)(uint16_t)s->lo | (uint64_t)(uint16_t)s->hi << 16 | (uint64_t)(uint8_t)s->depth << 32 |
           (uint64_t)(uint8_t)(int8_t)s->move << 40 | (uint64_t)(uint8_t)s->work << 48 | USED_BIT;
}

static inline void slot_unpack(uint64_t d, Slot *s) {
    s->lo = (int16_t)(d & 0xFFFF); s->hi = (int16_t)((d >> 16) & 0xFFFF); s->depth = (int)((d >> 32) & 0xFF);
    s->move = (int8_t)((d >> 40) & 0xFF); s->work = (int)((d >> 48) & 0xFF);
}

/* The data word of entry `e` if it holds key (k1, k2), else 0; relaxed loads (other threads may write). */
static inline uint64_t entry_data(const Entry *e, uint64_t k1, uint64_t k2) {
    uint64_t d = __atomic_load_n(&e->d, __ATOMIC_RELAXED);
    if (!(d & USED_BIT)) return 0;
    if ((__atomic_load_n(&e->a, __ATOMIC_RELAXED) ^ d) != k1) return 0;
    if ((__atomic_load_n(&e->b, __ATOMIC_RELAXED) ^ mix_d(d)) != k2) return 0;
    return d;
}

static inline void entry_write(Entry *e, uint64_t k1, uint64_t k2, uint64_t d) {
    __atomic_store_n(&e->a, k1 ^ d, __ATOMIC_RELAXED);
    __atomic_store_n(&e->b, k2 ^ mix_d(d), __ATOMIC_RELAXED);
    __atomic_store_n(&e->d, d, __ATOMIC_RELAXED);
}

/* The data word of the bucket's entry holding (k1, k2), else 0; `*at` (if given) is that entry. */
static inline uint64_t bucket_data(Entry *e, uint64_t k1, uint64_t k2, Entry **at) {
    for (int i = 0; i < 2; i++) {
        uint64_t d = entry_data(&e[i], k1, k2);
        if (!d) continue;
        if (at) *at = &e[i];
        return d;
    }
    return 0;
}

static inline int tt_find(SearcherObject *S, uint64_t k1, uint64_t k2, int near, Slot *out) {
    uint64_t d = bucket_data(tt_bucket(S, k1, k2, near), k1, k2, NULL);
    if (d) slot_unpack(d, out);
    return d != 0;
}

/* Store bounds: the entry of the same key if there is one, else the first of the bucket's two
   (whose old entry moves to the second) when this subtree was at least as much work. */
static void tt_store(SearcherObject *S, uint64_t k1, uint64_t k2, int near, int depth, int lo, int hi, int move,
                     uint64_t work) {
    Entry *e = tt_bucket(S, k1, k2, near), *slot;
    int w = 0;
    while (work > 1 && w < 63) { work >>= 1; w++; }
    uint64_t d = bucket_data(e, k1, k2, &slot);
    if (!d) {
        uint64_t d0 = __atomic_load_n(&e[0].d, __ATOMIC_RELAXED);
        slot = &e[1];
        if (!(d0 & USED_BIT) || w >= (int)((d0 >> 48) & 0xFF)) {  /* the first entry moves to the second */
            __atomic_store_n(&e[1].a, __atomic_load_n(&e[0].a, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
            __atomic_store_n(&e[1].b, __atomic_load_n(&e[0].b, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
            __atomic_store_n(&e[1].d, d0, __ATOMIC_RELAXED);
            slot = &e[0];
        }
    }
    Slot s = {lo, hi, depth, move, w};
    if (d) {
        Slot o;
        slot_unpack(d, &o);
        if (o.depth > depth) { o.move = move; entry_write(slot, k1, k2, slot_pack(&o)); return; }
        if (o.depth == depth) {
            if (s.lo < o.lo) s.lo = o.lo;
            if (s.hi > o.hi) s.hi = o.hi;
            if (s.lo > s.hi) s.lo = s.hi = (s.lo + s.hi) / 2;
            if (s.work < o.work) s.work = o.work;
        }
    }
    entry_write(slot, k1, k2, slot_pack(&s));
}

/* Simplified ABDADA: while a thread searches a large subtree its hash is listed here, and the
   other threads search their other moves first. */
static inline uint64_t *cs_line(SearcherObject *S, uint64_t h) {
    return &S->cs[(h >> 20 & (((uint64_t)1 << CS_LOG2) - 1)) * CS_WAYS];
}

static inline int cs_busy(SearcherObject *S, uint64_t h) {
    uint64_t *l = cs_line(S, h);
    for (int i = 0; i < CS_WAYS; i++)
        if (__atomic_load_n(&l[i], __ATOMIC_RELAXED) == h) return 1;
    return 0;
}

static inline void cs_start(SearcherObject *S, uint64_t h) {
    uint64_t *l = cs_line(S, h);
    for (int i = 0; i < CS_WAYS; i++) {
        uint64_t x = __atomic_load_n(&l[i], __ATOMIC_RELAXED);
        if (x == h) return;
        if (!x) { __atomic_store_n(&l[i], h, __ATOMIC_RELAXED); return; }
    }
    __atomic_store_n(&l[0], h, __ATOMIC_RELAXED);
}

static inline void cs_finish(SearcherObject *S, uint64_t h) {
    uint64_t *l = cs_line(S, h);
    for (int i = 0; i < CS_WAYS; i++)
        if (__atomic_load_n(&l[i], __ATOMIC_RELAXED) == h) __atomic_store_n(&l[i], 0, __ATOMIC_RELAXED);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int ab(SearcherObject *S, const int16_t *b, int k, int depth, int alpha, int beta);

/* The search with a bound on recursion (worker threads have small stacks): a line longer
   than MAX_PLY sowings is cut like a depth horizon, so its result is not marked exact. */
static int ab_guarded(SearcherObject *S, const int16_t *b, int k, int depth, int alpha, int beta) {
    if (S->ply >= MAX_PLY) { S->horizon++; return 0; }
    S->ply++;
    int v = ab(S, b, k, depth, alpha, beta);
    S->ply--;
    return v;
}

static int ab(SearcherObject *S, const int16_t *b, int k, int depth, int alpha, int beta) {
    const RulesObject *R = S->rules;
    S->nodes++;
    if ((++S->checks & 0xFFF) == 0) {
        if ((S->deadline > 0 && now_s() > S->deadline) || (S->node_stop && S->nodes >= S->node_stop) ||
            (S->race && __atomic_load_n(&S->race->stop, __ATOMIC_RELAXED)) || interrupted())
            S->aborted = 1;
        else if (!S->race && __atomic_load_n(&S->recall, __ATOMIC_RELAXED))
            S->aborted = RECALLED;
    }
    if (S->aborted) return 0;
    if (k <= S->egdb_max) {
        const Level *L = &S->levels[k];
        int e = 0;
        const uint64_t r = L->raw ? rank_board(R, b) : rank_empties(R, b, &e);
        S->st_egdb++;
        return level_value(L, r, e);
    }
    if (k <= alpha) return k;
    if (-k >= beta) return -k;
    if (depth == 0) { S->horizon++; return 0; }
    const int kk = k < ST_K ? k : ST_K - 1;
    S->st_k[kk]++;
    uint64_t k1, k2;
    make_key(R, b, &k1, &k2);
    int ttmove = -1;
    const int near = near_db(S, k);
    Slot e;
    S->st_probes++;
    if (tt_find(S, k1, k2, near, &e)) {
        ttmove = e.move;
        S->st_hits++;
        if (e.depth >= depth) {
            if (e.depth != EXACT) S->horizon++;
            if (e.lo >= beta) { S->st_cuts++; S->st_cut_k[kk]++; return e.lo; }
            if (e.hi <= alpha) { S->st_cuts++; S->st_cut_k[kk]++; return e.hi; }
            if (e.lo > alpha) alpha = e.lo;
            if (e.hi < beta) beta = e.hi;
        }
    }
    if (k < beta) beta = k;
    if (-k > alpha) alpha = -k;
    if (alpha >= beta) return alpha;
    Child ch[MAXH];
    const void *probe[MAXH];
    int nc = 0;
    for (int p = 0; p < R->h; p++) {
        if (!b[p]) continue;
        Child *c = &ch[nc];
        make_move(R, b, p, c);
        probe[nc++] = NULL;
        c->known = 0;
        if (c->over) {
            if (c->gain >= beta) return c->gain;
            c->score = 1 << 20;
        } else {
            c->score = (p == ttmove ? 1 << 22 : 0) + (c->extra ? 1 << 18 : 0) + c->gain * 64 + p;
        }
    }
    if (depth > 1) {
        /* Enhanced transposition cut-off: prefetch every child's entry, then look. */
        for (int i = 0; i < nc; i++) {
            Child *c = &ch[i];
            if (c->over) continue;
            if (c->k <= S->egdb_max) {
                int e = 0;
                c->k1 = S->levels[c->k].raw ? rank_board(R, c->b) : rank_empties(R, c->b, &e);
                c->k2 = (uint64_t)e;
                probe[i] = level_addr(&S->levels[c->k], c->k1);
            } else {
                uint64_t c1, c2;
                make_key(R, c->b, &c1, &c2);
                c->k1 = c1; c->k2 = c2;
                probe[i] = tt_bucket(S, c1, c2, near_db(S, c->k));
            }
            __builtin_prefetch(probe[i]);
        }
        for (int i = 0; i < nc; i++) {
            Child *c = &ch[i];
            if (!probe[i]) continue;
            int lo, hi;
            if (c->k <= S->egdb_max) {
                S->st_egdb++;
                lo = hi = level_value(&S->levels[c->k], c->k1, (int)c->k2);
                c->known = 1;
                c->val = lo;
                c->score = (1 << 24) + (c->extra ? c->gain + lo : c->gain - lo);
            } else {
                uint64_t d = bucket_data((Entry *)probe[i], c->k1, c->k2, NULL);
                Slot s2;
                slot_unpack(d, &s2);
                if (!d || s2.depth != EXACT) continue;
                lo = s2.lo; hi = s2.hi;
            }
            if (c->extra ? c->gain + lo >= beta : c->gain - hi >= beta) {
                S->st_etc++;
                S->st_etc_k[kk]++;
                return c->extra ? c->gain + lo : c->gain - hi;
            }
        }
    }
    int order[MAXH];
    for (int i = 0; i < nc; i++) {
        int j = i;
        while (j > 0 && ch[order[j - 1]].score < ch[i].score) { order[j] = order[j - 1]; j--; }
        order[j] = i;
    }
    const int a0 = alpha, b0 = beta;
    const uint64_t n0 = S->nodes, h0 = S->horizon;
    int best = -30000, bestmove = -1;
    const int cd = depth == EXACT ? EXACT : depth - 1;
    /* With other threads: a large child another thread is searching waits until the others are done. */
    int later[MAXH], nl = 0;
    for (int i = 0; i < nc + nl; i++) {
        const int deferred = i >= nc;
        Child *c = &ch[deferred ? later[i - nc] : order[i]];
        uint64_t hash = 0;
        if (S->cs && depth > 1 && !c->over && !c->known && c->k >= S->egdb_max + DEFER_SEEDS) {
            hash = (c->k1 * 0x9E3779B97F4A7C15ULL ^ c->k2) | 1;
            if (i > 0 && !deferred && cs_busy(S, hash)) { later[nl++] = order[i]; continue; }
            cs_start(S, hash);
        }
        int v;
        if (c->over) v = c->gain;
        else if (c->known) { S->nodes++; v = c->extra ? c->gain + c->val : c->gain - c->val; }
        else if (c->extra) v = c->gain + ab_guarded(S, c->b, c->k, cd, alpha - c->gain, beta - c->gain);
        else v = c->gain - ab_guarded(S, c->b, c->k, cd, c->gain - beta, c->gain - alpha);
        if (hash) cs_finish(S, hash);
        if (S->aborted) return 0;
        if (v > best) { best = v; bestmove = c->pit; }
        if (best > alpha) alpha = best;
        if (alpha >= beta) { S->st_fh_k[kk]++; if (i == 0) S->st_fh1_k[kk]++; break; }
    }
    int lo = best <= a0 ? -30000 : best, hi = best >= b0 ? 30000 : best;
    if (lo < -k) lo = -k;
    if (hi > k) hi = k;
    int sd = S->horizon == h0 ? EXACT : depth;
    tt_store(S, k1, k2, near, sd, lo, hi, bestmove, S->nodes - n0);
    return best;
}

/* ---------------------------------------------------------------- endgame databases */

typedef struct {
    const RulesObject *R;
    int k;
    const Level *levels;  /* levels[j] for j < k */
    int8_t *out;
} Builder;

/* Threads may build disjoint rank ranges of one level at once: a position reached from two
   ranges is computed by both, which store the same value, so relaxed atomics suffice.
   `r` is the rank of `b`; every child's entry is prefetched before any is read. */
static int build_value(Builder *B, const int16_t *b, uint64_t r) {
    int8_t known = __atomic_load_n(&B->out[r], __ATOMIC_RELAXED);
    if (known != SENT) return known;
    const RulesObject *R = B->R;
    int best = -30000;
    int empty_m = 1, empty_o = 1;
    for (int p = 0; p < R->h; p++) {
        if (b[p]) empty_m = 0;
        if (b[p + R->h + 1]) empty_o = 0;
    }
    if (empty_m || empty_o) {
        int k = B->k;
        if (R->leftover == 0) best = empty_m ? -k : k;
        else if (R->leftover == 1) best = empty_m ? k : -k;
        else best = 0;
        __atomic_store_n(&B->out[r], (int8_t)best, __ATOMIC_RELAXED);
        return best;
    }
    Child ch[MAXH];
    const void *at[MAXH];
    int nc = 0;
    for (int p = 0; p < R->h; p++) {
        if (!b[p]) continue;
        Child *c = &ch[nc];
        make_move(R, b, p, c);
        at[nc] = NULL;
        if (!c->over) {
            int e = 0;
            c->k1 = c->k < B->k && !B->levels[c->k].raw ? rank_empties(R, c->b, &e) : rank_board(R, c->b);
            c->k2 = (uint64_t)e;
            at[nc] = c->k < B->k ? level_addr(&B->levels[c->k], c->k1) : &B->out[c->k1];
            __builtin_prefetch(at[nc]);
        }
        nc++;
    }
    for (int i = 0; i < nc; i++) {
        Child *c = &ch[i];
        int v;
        if (c->over) v = c->gain;
        else {
            int cv;
            if (c->k < B->k) cv = level_value(&B->levels[c->k], c->k1, (int)c->k2);
            else if ((cv = __atomic_load_n(&B->out[c->k1], __ATOMIC_RELAXED)) == SENT) cv = build_value(B, c->b, c->k1);
            v = c->extra ? c->gain + cv : c->gain - cv;
        }
        if (v > best) best = v;
    }
    __atomic_store_n(&B->out[r], (int8_t)best, __ATOMIC_RELAXED);
    return best;
}

/* Board (stores zero) of the composition with bar positions bars[0..m-2] of k seeds. */
static void bars_to_board(const RulesObject *R, const int *bars, int k, int16_t *b) {
    const int h = R->h, m = 2 * h;
    memset(b, 0, sizeof(int16_t) * R->n);
    int prev = -1;
    for (int j = 0; j < m; j++) {
        int p = j < m - 1 ? bars[j] : k + m - 1;
        int x = p - prev - 1;
        prev = p;
        b[j < h ? j : j + 1] = (int16_t)x;
    }
}

static void unrank_bars(int m, uint64_t r, int k, int *bars) {
    int top = k + m - 2;
    for (int j = m - 2; j >= 0; j--) {
        int p = top;
        while (binom[p][j + 1] > r) p--;
        bars[j] = p;
        r -= binom[p][j + 1];
        top = p - 1;
    }
}

static void build_range(Builder *B, uint64_t start, uint64_t stop) {
    const int m = 2 * B->R->h, k = B->k;
    int bars[MAXP];
    int16_t b[MAXP];
    if (start >= stop) return;
    unrank_bars(m, start, k, bars);
    for (uint64_t r = start; r < stop; r++) {
        if ((r & 0xFFF) == 0 && interrupted()) return;
        bars_to_board(B->R, bars, k, b);
        build_value(B, b, r);
        int j = 0;
        while (j < m - 2 && bars[j] + 1 == bars[j + 1]) j++;
        bars[j]++;
        for (int i = 0; i < j; i++) bars[i] = i;
    }
}
