/* The C search core of the Kalah Arena bots: move generation, exact and depth-limited
 * alpha-beta with a transposition table, enhanced transposition cut-offs and endgame
 * database probes, and endgame database construction.
 *
 * Boards are in the mover-relative frame: the side to move owns pits 0..h-1 and store h,
 * the opponent owns h+1..2h and store 2h+1.  Values are what the side to move still gains
 * over the opponent until the game ends (stores are not part of a value).
 * The twin of every function here is in bots/pysearch.py.  Relay sowing is not handled
 * here (Rules refuses it); the Python twin plays relay variants.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <pthread.h>
#include <sys/mman.h>

#define MAXH 12
#define MAXP (2 * MAXH + 2)
#define MAXLAP (2 * MAXH + 1)
#define EXACT 255
#define SENT (-128)
#define MAXLEVEL 120
#define BINOM_N 160
#define MAX_PLY 2000
#define MAX_TOTAL 20000  /* seeds on a board: pits are int16_t, values and table bounds int16_t */
#define NEAR_SEEDS 8     /* positions this close to the databases use the small table */
#define NEAR_LOG2 16     /* the small table: at most 2^16 entries (1.5 MiB) */
#define MAX_THREADS 64   /* threads of one search */
#define DEFER_SEEDS 4    /* children this far beyond the databases take part in ABDADA's deferral */
#define ST_K 64          /* counters by seeds in play: 0..ST_K-1 (more seeds count in the last) */
#define RECALLED 2       /* SearcherObject.aborted: stopped by recall() */

typedef struct {
    PyObject_HEAD
    int h, n, L;
    uint8_t lap[MAXH][MAXLAP];
    int8_t opp[MAXP];
    int capture, extra, leftover, majority, total;
    int packed, bits;
} RulesObject;

/* A table entry as three words: the key's two halves each XORed with (a mix of) the data word, so
   an entry torn by two threads writing at once fails the key check and reads as a miss. */
typedef struct {
    uint64_t a, b, d;
} Entry;

/* The data word decoded: bounds, depth (EXACT: no horizon), best move, log2 of the subtree's nodes. */
typedef struct {
    int lo, hi, depth, move, work;
} Slot;

#define CS_LOG2 15  /* the table of subtrees being searched by some thread (simplified ABDADA) */
#define CS_WAYS 4

/* What the threads of one search share: a stop flag, the winner and its result. */
typedef struct {
    int stop, winner, value, exact;
} Race;

/* A database level in memory (bots/_search_level.h): v1's bytes, or v2's blocks, group words and exceptions. */
typedef struct {
    const int8_t *raw;       /* v1: the value of each rank; NULL for v2 */
    const uint8_t *blocks, *groups, *exc;
    uint64_t nexc;
    int h, k, shift;
    uint8_t pred[(MAXH + 1) * (MAXH + 1)];
} Level;

typedef struct {
    PyObject_HEAD
    RulesObject *rules;
    Entry *tt;
    size_t tt_bytes;
    uint64_t mask, near_mask;
    int tt_log2;
    int egdb_max;
    Py_buffer views[MAXLEVEL + 1];
    Level levels[MAXLEVEL + 1];
    uint64_t nodes, horizon, checks, node_stop;
    uint64_t st_probes, st_hits, st_cuts, st_egdb, st_etc;  /* table probes, hits, cut-offs; database reads; ETC cut-offs */
    uint64_t st_k[ST_K], st_etc_k[ST_K], st_cut_k[ST_K], st_fh1_k[ST_K], st_fh_k[ST_K];  /* by seeds in play: interior
        nodes, ETC cut-offs, table cut-offs, fail-highs on the first move searched, all fail-highs */
    int aborted;
    double deadline;
    int last_exact;
    int ply;
    int busy;
    int recall;          /* set by any thread: a one-thread search stops with Recalled (to run again on more) */
    Race *race;          /* while several threads search: shared stop flag (NULL: one thread) */
    uint64_t *cs;        /* hashes of subtrees being searched, CS_WAYS per line (shared by the threads) */
} SearcherObject;

/* Every board the rules allow (12 houses of 200 seeds: 4,800 seeds) fits; database values are
   int8_t, so levels stop at MAXLEVEL seeds, and ranks need binomials up to MAXLEVEL + 2 * MAXH. */
_Static_assert(MAX_TOTAL >= 2 * MAXH * 200 && MAX_TOTAL < 30000, "seed counts must fit int16_t with room");
_Static_assert(MAXLEVEL <= 127 && MAXLEVEL + MAXP <= BINOM_N, "database levels must fit int8_t and binom");

static uint64_t binom[BINOM_N][MAXP];

/* Set by `interrupt()` (from any thread, e.g. on SIGINT): every search and database build of the process
   stops at its next check and raises KeyboardInterrupt. */
static int g_interrupt;

static inline int interrupted(void) { return __atomic_load_n(&g_interrupt, __ATOMIC_RELAXED); }

static void init_binom(void) {
    for (int a = 0; a < BINOM_N; a++) {
        for (int b = 0; b < MAXP; b++) {
            if (b == 0) binom[a][b] = 1;
            else if (a == 0) binom[a][b] = 0;
            else {
                uint64_t x = binom[a - 1][b - 1], y = binom[a - 1][b];
                binom[a][b] = (x + y < x || x + y > (1ULL << 62)) ? (1ULL << 62) : x + y;
            }
        }
    }
}

#include "_search_level.h"

/* ---------------------------------------------------------------- moves */

typedef struct {
    int16_t b[MAXP];
    int gain, extra, over, pit, score, k, known, val;
    uint64_t k1, k2;
} Child;

/* Sow house `pit` of board `src` into `out`; fill gain/extra/over; rotate if the turn passes. */
static void make_move(const RulesObject *R, const int16_t *src, int pit, Child *c) {
    int16_t w[MAXP];
    const int h = R->h, n = R->n, L = R->L;
    memcpy(w, src, sizeof(int16_t) * n);
    int seeds = w[pit];
    w[pit] = 0;
    const uint8_t *lap = R->lap[pit];
    int last;
    if (seeds <= L) {
        for (int i = 0; i < seeds; i++) w[lap[i]]++;
        last = lap[seeds - 1];
    } else {
        int rounds = seeds / L, rest = seeds % L;
        for (int i = 0; i < L; i++) w[lap[i]] += rounds;
        for (int i = 0; i < rest; i++) w[lap[i]]++;
        last = lap[(seeds - 1) % L];
    }
    int extra = 0;
    if (last == h) {
        extra = R->extra;
    } else if (last < h && w[last] == 1 && R->capture != 2) {
        int o = R->opp[last];
        if (w[o] || R->capture == 1) {
            w[h] += w[o] + 1;
            w[o] = 0;
            w[last] = 0;
        }
    }
    int gain = w[h] - src[h];
    int sm = 0, so = 0;
    for (int i = 0; i < h; i++) sm += w[i];
    for (int i = h + 1; i < 2 * h + 1; i++) so += w[i];
    int over = (sm == 0 || so == 0);
    if (!over && R->majority && (2 * w[h] > R->total || 2 * w[n - 1] > R->total)) over = 1;
    if (over) {
        for (int i = 0; i < n; i++) if (i != h && i != n - 1) w[i] = 0;
        if (R->leftover == 0) {
            w[h] += sm; w[n - 1] += so; gain += sm - so;
        } else if (R->leftover == 1 && ((sm == 0) != (so == 0))) {
            if (sm == 0) { w[h] += so; gain += so; } else { w[n - 1] += sm; gain -= sm; }
        } else if (R->leftover == 1) {
            w[h] += sm; w[n - 1] += so; gain += sm - so;
        }
        extra = 0;
    }
    c->gain = gain;
    c->extra = extra;
    c->over = over;
    c->pit = pit;
    if (over || extra) {
        memcpy(c->b, w, sizeof(int16_t) * n);
        c->k = over ? 0 : sm + so;
    } else {
        memcpy(c->b, w + h + 1, sizeof(int16_t) * (h + 1));
        memcpy(c->b + h + 1, w, sizeof(int16_t) * (h + 1));
        c->k = sm + so;
    }
}

static inline int house_sum(const RulesObject *R, const int16_t *b) {
    int k = 0;
    for (int i = 0; i < R->h; i++) k += b[i] + b[i + R->h + 1];
    return k;
}

/* Combinatorial rank of the 2h house counts among all with the same total. */
static inline uint64_t rank_board(const RulesObject *R, const int16_t *b) {
    const int h = R->h, m = 2 * h;
    uint64_t r = 0;
    int p = -1;
    for (int j = 0; j < m - 1; j++) {
        int x = j < h ? b[j] : b[j + 1];
        p += x + 1;
        r += binom[p][j + 1];
    }
    return r;
}

/* The rank of a board (`rank_board`) and, into `*e`, its empty houses for a level's predictor: the mover's times
   h + 1 plus the opponent's (`empties_index`), counted in the same pass. */
static inline uint64_t rank_empties(const RulesObject *R, const int16_t *b, int *e) {
    const int h = R->h, m = 2 * h;
    uint64_t r = 0;
    int p = -1, em = 0, eo = 0;
    for (int j = 0; j < h; j++) {
        const int x = b[j];
        em += !x;
        p += x + 1;
        r += binom[p][j + 1];
    }
    for (int j = h; j < m - 1; j++) {
        const int x = b[j + 1];
        eo += !x;
        p += x + 1;
        r += binom[p][j + 1];
    }
    eo += !b[m];
    *e = em * (h + 1) + eo;
    return r;
}

/* ---------------------------------------------------------------- rules */

static int seq_int(PyObject *seq, Py_ssize_t i, long *out) {
    PyObject *item = PySequence_GetItem(seq, i);
    if (!item) return -1;
    *out = PyLong_AsLong(item);
    Py_DECREF(item);
    return (*out == -1 && PyErr_Occurred()) ? -1 : 0;
}

static int attr_int(PyObject *obj, const char *name, long *out) {
    PyObject *v = PyObject_GetAttrString(obj, name);
    if (!v) return -1;
    *out = PyLong_AsLong(v);
    Py_DECREF(v);
    return (*out == -1 && PyErr_Occurred()) ? -1 : 0;
}

static int Rules_init(RulesObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"tables", NULL};
    PyObject *t;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O", kwlist, &t)) return -1;
    long h, cap, ex, lo, maj, tot, relay;
    if (attr_int(t, "houses", &h) || attr_int(t, "capture_code", &cap) || attr_int(t, "extra_turn", &ex) ||
        attr_int(t, "leftover_code", &lo) || attr_int(t, "majority_end", &maj) ||
        attr_int(t, "total_seeds", &tot) || attr_int(t, "relay", &relay))
        return -1;
    if (relay) {
        PyErr_SetString(PyExc_NotImplementedError, "the C core does not play relay sowing; use bots.pysearch");
        return -1;
    }
    if (h < 1 || h > MAXH) {
        PyErr_SetString(PyExc_ValueError, "houses out of range");
        return -1;
    }
    self->h = (int)h; self->n = 2 * (int)h + 2; self->L = 2 * (int)h + 1;
    self->capture = (int)cap; self->extra = (int)ex; self->leftover = (int)lo;
    self->majority = (int)maj; self->total = (int)tot;
    PyObject *laps = PyObject_GetAttrString(t, "laps");
    PyObject *opp = PyObject_GetAttrString(t, "opposite");
    int rc = -1;
    if (!laps || !opp) goto done;
    PyObject *south = PySequence_GetItem(laps, 0);
    PyObject *north = PySequence_GetItem(laps, 1);
    if (!south || !north) { Py_XDECREF(south); Py_XDECREF(north); goto done; }
    int ok = 1;
    for (int p = 0; p < h && ok; p++) {
        PyObject *ls = PySequence_GetItem(south, p), *ln = PySequence_GetItem(north, p + h + 1);
        if (!ls || !ln || PySequence_Size(ls) != self->L || PySequence_Size(ln) != self->L) ok = 0;
        for (int i = 0; ok && i < self->L; i++) {
            long a, b2;
            if (seq_int(ls, i, &a) || seq_int(ln, i, &b2)) { ok = 0; break; }
            if (a < 0 || a > 2 * h || b2 != (a + h + 1) % self->n) ok = 0;
            self->lap[p][i] = (uint8_t)a;
        }
        Py_XDECREF(ls); Py_XDECREF(ln);
    }
    for (int i = 0; ok && i < self->n; i++) {
        long o;
        if (seq_int(opp, i, &o)) { ok = 0; break; }
        self->opp[i] = (int8_t)o;
    }
    Py_DECREF(south); Py_DECREF(north);
    if (!ok) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "tables are not side-symmetric");
        goto done;
    }
    int bits = 1;
    while ((1L << bits) <= tot) bits++;
    int fields = 2 * (int)h + (maj ? 2 : 0);
    self->bits = bits;
    self->packed = bits * fields <= 128;
    rc = 0;
done:
    Py_XDECREF(laps); Py_XDECREF(opp);
    return rc;
}

static PyMemberDef Rules_members[] = {
    {"h", T_INT, offsetof(RulesObject, h), READONLY, "Houses per side."},
    {"n", T_INT, offsetof(RulesObject, n), READONLY, "Pits on the board."},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject RulesType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "bots._search.Rules",
    .tp_basicsize = sizeof(RulesObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Compiled rules of a (non-relay) variant for the C core.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Rules_init,
    .tp_members = Rules_members,
};

static int board_from_py(const RulesObject *R, PyObject *seq, int16_t *b) {
    Py_ssize_t len = PySequence_Size(seq);
    if (len != R->n) {
        if (!PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "a board has %d pits", R->n);
        return -1;
    }
    long total = 0;
    for (int i = 0; i < R->n; i++) {
        long v;
        if (seq_int(seq, i, &v)) return -1;
        if (v < 0 || v > MAX_TOTAL) {
            PyErr_Format(PyExc_ValueError, "pit %d holds %ld seeds: the C core handles 0..%d", i, v, MAX_TOTAL);
            return -1;
        }
        b[i] = (int16_t)v;
        total += v;
    }
    if (total > MAX_TOTAL) {
        PyErr_Format(PyExc_ValueError, "the board holds %ld seeds: the C core handles at most %d", total, MAX_TOTAL);
        return -1;
    }
    return 0;
}

static PyObject *board_to_py(const RulesObject *R, const int16_t *b) {
    PyObject *t = PyTuple_New(R->n);
    if (!t) return NULL;
    for (int i = 0; i < R->n; i++) PyTuple_SET_ITEM(t, i, PyLong_FromLong(b[i]));
    return t;
}

#include "_search_core.h"
#include "_search_module.h"
