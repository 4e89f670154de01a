/* A bot's whole move by iterative deepening, without the GIL from the first search to the last;
 * included by _search_module.h only.  The twin is bots/pysearch.py's `deepen`, which makes the same
 * search calls in the same order, so both leave the same table and choose the same move.
 *
 * Each iteration (depths 1, 3, 5, ... below the top, the top, then for acyclic variants asked for it
 * an exact one) values the root's moves: the previous iteration's best move first, then each other
 * move only if a null-window search shows it beats the best so far, valued by MTD(f) from the
 * previous iteration's value.  The deepening ends at the deadline (the deepest finished iteration
 * counts) or after an iteration that reached no horizon in an acyclic variant (proved). */

/* One deepening under way: its searcher, deadline (0: none), whether every search of the iteration reached
   no horizon, and whether a search was stopped (1: time up or the process interrupted; RECALLED). */
typedef struct {
    SearcherObject *S;
    double deadline;
    int all_exact, failed;
} Deepening;

/* One search call as Searcher.search makes it, stopping the deepening if the time is up before or during it. */
static int dp_search(Deepening *D, const int16_t *b, int k, int depth, int alpha, int beta) {
    SearcherObject *S = D->S;
    if (D->deadline > 0 && now_s() >= D->deadline) { D->failed = 1; return 0; }
    S->aborted = 0;
    S->deadline = D->deadline;
    S->node_stop = 0;
    S->ply = 0;
    uint64_t h0 = S->horizon;
    int v = ab(S, b, k, depth, alpha, beta);
    S->last_exact = S->horizon == h0;
    if (S->aborted) { D->failed = S->aborted; return 0; }  /* RECALLED: by Searcher.recall() */
    if (!S->last_exact) D->all_exact = 0;
    return v;
}

/* Mover's value of a board by MTD(f) null-window searches from `guess` (Engine.mtdf). */
static int dp_mtdf(Deepening *D, const Child *c, int guess, int depth) {
    int lower = -c->k, upper = c->k;
    int g = guess < lower ? lower : guess > upper ? upper : guess;
    while (lower < upper) {
        int beta = g > lower + 1 ? g : lower + 1;
        g = dp_search(D, c->b, c->k, depth, beta - 1, beta);
        if (D->failed) return 0;
        if (g < beta) upper = g;
        else lower = g;
    }
    return g;
}

/* Mover's value of one root move from a guess of the root's value (Engine.child_value). */
static int dp_child_value(Deepening *D, const Child *c, int depth, int guess) {
    if (c->over) return c->gain;
    if (c->extra) return c->gain + dp_mtdf(D, c, guess - c->gain, depth);
    return c->gain - dp_mtdf(D, c, c->gain - guess, depth);
}

/* Whether a root move attains at least `value` for the mover: one null-window search (Engine._reaches). */
static int dp_reaches(Deepening *D, const Child *c, int value, int depth) {
    if (c->over) return c->gain >= value;
    if (c->extra) return c->gain + dp_search(D, c->b, c->k, depth, value - c->gain - 1, value - c->gain) >= value;
    return c->gain - dp_search(D, c->b, c->k, depth, c->gain - value, c->gain - value + 1) >= value;
}

/* The best root move at `depth` (pit `first` tried first): its pit and value in *pit and *value. */
static void dp_root(Deepening *D, const Child *kids, int nk, int depth, int guess, int first, int *pit, int *value) {
    int order[MAXH], no = 0;
    for (int i = 0; i < nk; i++) if (kids[i].pit == first) order[no++] = i;
    for (int i = 0; i < nk; i++) if (kids[i].pit != first) order[no++] = i;
    int best_pit = -1, best_v = -1000000;
    for (int j = 0; j < nk; j++) {
        const Child *c = &kids[order[j]];
        if (best_pit >= 0) {
            int r = dp_reaches(D, c, best_v + 1, depth);
            if (D->failed) return;
            if (!r) continue;
        }
        int v = dp_child_value(D, c, depth, guess);
        if (D->failed) return;
        if (v > best_v) { best_pit = c->pit; best_v = v; }
    }
    *pit = best_pit;
    *value = best_v;
}

static PyObject *Searcher_deepen(SearcherObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"board", "time_limit", "max_depth", "acyclic", NULL};
    PyObject *seq;
    double limit = 0.0;
    int max_depth = -1, acyclic = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "Od|ip", kwlist, &seq, &limit, &max_depth, &acyclic)) return NULL;
    int16_t b[MAXP];
    if (searchable_board(self, seq, b) < 0) return NULL;
    const RulesObject *R = self->rules;
    if (__atomic_exchange_n(&self->recall, 0, __ATOMIC_RELAXED)) {  /* as a one-thread search: Recalled */
        PyErr_SetString(RecalledError, "search recalled (to be run again, e.g. on more threads)");
        return NULL;
    }
    const int top = max_depth < 0 || max_depth > EXACT - 1 ? EXACT - 1 : max_depth;
    const int prove_last = max_depth < 0 && acyclic;
    Child kids[MAXH];
    int nk = 0;
    for (int p = 0; p < R->h; p++)
        if (b[p]) make_move(R, b, p, &kids[nk++]);
    int depths[EXACT / 2 + 3], nd = 0;
    for (int d = 1; d < top; d += 2) depths[nd++] = d;
    depths[nd++] = top;
    if (prove_last) depths[nd++] = EXACT;
    Deepening D = {self, limit > 0 ? now_s() + limit : 0, 1, 0};
    int found = 0, f_pit = -1, f_value = 0, f_exact = 0, f_depth = 0;
    self->busy = 1;
    Py_BEGIN_ALLOW_THREADS
    for (int i = 0; i < nd; i++) {
        int pit = -1, value = 0;
        D.all_exact = 1;
        dp_root(&D, kids, nk, depths[i], found ? f_value : 0, found ? f_pit : -1, &pit, &value);
        if (D.failed) break;
        found = 1;
        f_pit = pit; f_value = value; f_exact = D.all_exact && acyclic;
        f_depth = depths[i] == EXACT ? -1 : depths[i];
        if (f_exact) break;
    }
    Py_END_ALLOW_THREADS
    self->busy = 0;
    if (D.failed && interrupted()) { PyErr_SetNone(PyExc_KeyboardInterrupt); return NULL; }
    if (D.failed == RECALLED) {
        __atomic_store_n(&self->recall, 0, __ATOMIC_RELAXED);
        PyErr_SetString(RecalledError, "search recalled (to be run again, e.g. on more threads)");
        return NULL;
    }
    if (!found) Py_RETURN_NONE;
    return Py_BuildValue("(iiNi)", f_pit, f_value, PyBool_FromLong(f_exact), f_depth);
}
