/* Python-facing Searcher type and module functions; included by _search.c only. */

static PyObject *RecalledError;  /* bots._search.Recalled */

static void release_levels(SearcherObject *S) {
    for (int k = 1; k <= S->egdb_max; k++) {
        if (S->views[k].obj) PyBuffer_Release(&S->views[k]);
        memset(&S->levels[k], 0, sizeof S->levels[k]);
    }
    S->egdb_max = 0;
}

/* The tables (main, then small) live in anonymous memory advised to use huge pages (fewer TLB misses). */
static int tt_alloc(SearcherObject *S, int log2) {
    const int near_log2 = log2 < NEAR_LOG2 ? log2 : NEAR_LOG2;
    size_t bytes = (sizeof(Entry) << log2) + (sizeof(Entry) << near_log2);
    S->near_mask = ((uint64_t)1 << near_log2) - 1;
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return -1;
#ifdef MADV_HUGEPAGE
    madvise(p, bytes, MADV_HUGEPAGE);
#endif
    S->tt = p;
    S->tt_bytes = bytes;
    return 0;
}

static void tt_free(SearcherObject *S) {
    if (S->tt) munmap(S->tt, S->tt_bytes);
    S->tt = NULL;
    S->tt_bytes = 0;
}

static int Searcher_init(SearcherObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"rules", "tt_log2", "egdb", NULL};
    PyObject *rules, *egdb = Py_None;
    int tt_log2 = 20;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!|iO", kwlist, &RulesType, &rules, &tt_log2, &egdb))
        return -1;
    if (tt_log2 < 4 || tt_log2 > 32) {
        PyErr_SetString(PyExc_ValueError, "tt_log2 must be 4..32");
        return -1;
    }
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "this Searcher is searching in another thread");
        return -1;
    }
    release_levels(self);
    Py_XSETREF(self->rules, (RulesObject *)Py_NewRef(rules));
    tt_free(self);
    if (tt_alloc(self, tt_log2)) { PyErr_NoMemory(); return -1; }
    self->mask = ((uint64_t)1 << tt_log2) - 1;
    self->tt_log2 = tt_log2;
    if (egdb != Py_None) {
        Py_ssize_t levels = PySequence_Size(egdb);
        if (levels < 0) return -1;
        if (levels - 1 > MAXLEVEL) { PyErr_SetString(PyExc_ValueError, "too many database levels"); return -1; }
        if (levels > 1 && self->rules->majority) {
            PyErr_SetString(PyExc_ValueError, "endgame databases do not apply to majority-end variants");
            return -1;
        }
        for (Py_ssize_t k = 1; k < levels; k++) {
            PyObject *item = PySequence_GetItem(egdb, k);
            if (!item) return -1;
            int rc = PyObject_GetBuffer(item, &self->views[k], PyBUF_SIMPLE);
            Py_DECREF(item);
            if (rc) return -1;
            self->egdb_max = (int)k;
            char why[160];
            if (level_parse(&self->levels[k], self->views[k].buf, (uint64_t)self->views[k].len, self->rules->h,
                            (int)k, why, sizeof why)) {
                PyErr_SetString(PyExc_ValueError, why);
                return -1;
            }
        }
    }
    return 0;
}

static void Searcher_dealloc(SearcherObject *self) {
    release_levels(self);
    PyMem_RawFree(self->cs);
    tt_free(self);
    Py_XDECREF(self->rules);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

#define THREAD_STACK (64u << 20)  /* MAX_PLY nested calls */

typedef struct {
    SearcherObject *S;
    const int16_t *b;
    int k, depth, alpha, beta, id;
    uint64_t h0;
} Job;

/* One thread's search; the first to finish unaborted is the winner, and every finish stops the others. */
static void *job_run(void *arg) {
    Job *j = arg;
    SearcherObject *T = j->S;
    int v = ab(T, j->b, j->k, j->depth, j->alpha, j->beta);
    Race *r = T->race;
    if (!T->aborted) {
        int none = -1;
        if (__atomic_compare_exchange_n(&r->winner, &none, j->id, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            r->value = v;
            r->exact = T->horizon == j->h0;
        }
    }
    __atomic_store_n(&r->stop, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* The search on `threads` threads over the one table (simplified ABDADA); called without the GIL.
   Helpers are copies of the searcher with counters of their own, added to the searcher's at the end. */
static int search_threads(SearcherObject *self, const int16_t *b, int k, int depth, int alpha, int beta,
                          int threads, SearcherObject *helpers) {
    Race race = {0, -1, 0, 0};
    pthread_t tid[MAX_THREADS];
    Job jobs[MAX_THREADS];
    int started[MAX_THREADS] = {0};
    memset(self->cs, 0, sizeof(uint64_t) * ((size_t)1 << CS_LOG2) * CS_WAYS);
    self->race = &race;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, THREAD_STACK);
    for (int i = 1; i < threads; i++) {
        SearcherObject *H = &helpers[i - 1];
        memcpy(H, self, sizeof(SearcherObject));
        H->nodes = H->horizon = H->checks = H->node_stop = 0;
        H->st_probes = H->st_hits = H->st_cuts = H->st_egdb = H->st_etc = 0;
        memset(H->st_k, 0, sizeof H->st_k); memset(H->st_etc_k, 0, sizeof H->st_etc_k);
        memset(H->st_cut_k, 0, sizeof H->st_cut_k); memset(H->st_fh1_k, 0, sizeof H->st_fh1_k);
        memset(H->st_fh_k, 0, sizeof H->st_fh_k);
        H->ply = 0;
        jobs[i] = (Job){H, b, k, depth, alpha, beta, i, 0};
        started[i] = pthread_create(&tid[i], &attr, job_run, &jobs[i]) == 0;
    }
    pthread_attr_destroy(&attr);
    jobs[0] = (Job){self, b, k, depth, alpha, beta, 0, self->horizon};
    job_run(&jobs[0]);
    for (int i = 1; i < threads; i++) {
        if (!started[i]) continue;
        pthread_join(tid[i], NULL);
        SearcherObject *H = &helpers[i - 1];
        self->nodes += H->nodes;
        self->st_probes += H->st_probes; self->st_hits += H->st_hits; self->st_cuts += H->st_cuts;
        self->st_egdb += H->st_egdb; self->st_etc += H->st_etc;
        for (int q = 0; q < ST_K; q++) {
            self->st_k[q] += H->st_k[q]; self->st_etc_k[q] += H->st_etc_k[q]; self->st_cut_k[q] += H->st_cut_k[q];
            self->st_fh1_k[q] += H->st_fh1_k[q]; self->st_fh_k[q] += H->st_fh_k[q];
        }
    }
    self->race = NULL;
    self->aborted = race.winner < 0;
    self->horizon = jobs[0].h0 + !race.exact;
    return race.value;
}

/* The board a search or deepening of `self` may start from, into `b`: the seeds in houses, or -1 with an
   exception set (an uninitialised or busy searcher, a malformed board, a finished game). */
static int searchable_board(SearcherObject *self, PyObject *seq, int16_t *b) {
    if (!self->rules) { PyErr_SetString(PyExc_ValueError, "uninitialised Searcher"); return -1; }
    const RulesObject *R = self->rules;
    if (board_from_py(R, seq, b)) return -1;
    int sm = 0, so = 0;
    for (int i = 0; i < R->h; i++) { sm += b[i]; so += b[i + R->h + 1]; }
    if (sm == 0 || so == 0 ||
        (R->majority && (2 * b[R->h] > R->total || 2 * b[R->n - 1] > R->total))) {
        PyErr_SetString(PyExc_ValueError, "the game is over on this board");
        return -1;
    }
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "this Searcher is searching in another thread");
        return -1;
    }
    return sm + so;
}

static PyObject *Searcher_search(SearcherObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"board", "depth", "alpha", "beta", "time_limit", "node_limit", "threads", NULL};
    PyObject *seq;
    int depth, alpha, beta, threads = 1;
    double limit = 0.0;
    unsigned long long node_limit = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "Oiii|dKi", kwlist, &seq, &depth, &alpha, &beta, &limit,
                                     &node_limit, &threads))
        return NULL;
    if (threads < 1 || threads > MAX_THREADS) {
        PyErr_Format(PyExc_ValueError, "threads must be 1..%d", MAX_THREADS);
        return NULL;
    }
    int16_t b[MAXP];
    const int in_houses = searchable_board(self, seq, b);
    if (in_houses < 0) return NULL;
    int d = depth < 0 || depth >= EXACT ? EXACT : depth;
    int v;
    SearcherObject *helpers = NULL;
    if (d != EXACT) threads = 1;  /* depth-limited searches stay on one thread (their horizon is per thread) */
    if (threads > 1) __atomic_store_n(&self->recall, 0, __ATOMIC_RELAXED);  /* already on more threads */
    else if (__atomic_exchange_n(&self->recall, 0, __ATOMIC_RELAXED)) {
        PyErr_SetString(RecalledError, "search recalled (to be run again, e.g. on more threads)");
        return NULL;
    }
    if (threads > 1) {
        if (!self->cs) self->cs = PyMem_RawCalloc(((size_t)1 << CS_LOG2) * CS_WAYS, sizeof(uint64_t));
        helpers = PyMem_RawMalloc(sizeof(SearcherObject) * (size_t)(threads - 1));
        if (!self->cs || !helpers) { PyMem_RawFree(helpers); return PyErr_NoMemory(); }
    }
    self->aborted = 0;
    self->deadline = limit > 0 ? now_s() + limit : 0;
    self->node_stop = node_limit ? self->nodes + node_limit : 0;
    self->ply = 0;
    uint64_t h0 = self->horizon;
    self->busy = 1;
    Py_BEGIN_ALLOW_THREADS
    if (threads > 1) v = search_threads(self, b, in_houses, d, alpha, beta, threads, helpers);
    else v = ab(self, b, in_houses, d, alpha, beta);
    Py_END_ALLOW_THREADS
    PyMem_RawFree(helpers);
    self->busy = 0;
    self->last_exact = self->horizon == h0;
    if (self->aborted) {
        if (interrupted()) PyErr_SetNone(PyExc_KeyboardInterrupt);
        else if (self->aborted == RECALLED) {
            __atomic_store_n(&self->recall, 0, __ATOMIC_RELAXED);
            PyErr_SetString(RecalledError, "search recalled (to be run again, e.g. on more threads)");
        } else PyErr_SetString(PyExc_TimeoutError, "search time or node limit reached");
        return NULL;
    }
    return PyLong_FromLong(v);
}

static PyObject *Searcher_recall(SearcherObject *self, PyObject *args) {
    int on = 1;
    if (!PyArg_ParseTuple(args, "|p", &on)) return NULL;
    __atomic_store_n(&self->recall, on, __ATOMIC_RELAXED);
    Py_RETURN_NONE;
}

static PyObject *Searcher_clear(SearcherObject *self, PyObject *Py_UNUSED(ignored)) {
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "this Searcher is searching in another thread");
        return NULL;
    }
    if (self->tt) {
        /* Up to hundreds of MiB: without the GIL; busy keeps search, clear and __init__ (which frees the table)
           of other threads off it meanwhile. */
        void *tt = self->tt;
        size_t bytes = self->tt_bytes;
        self->busy = 1;
        Py_BEGIN_ALLOW_THREADS
        memset(tt, 0, bytes);
        Py_END_ALLOW_THREADS
        self->busy = 0;
    }
    Py_RETURN_NONE;
}

static PyObject *Searcher_get_nodes(SearcherObject *self, void *c) { return PyLong_FromUnsignedLongLong(self->nodes); }
static PyObject *Searcher_get_exact(SearcherObject *self, void *c) { return PyBool_FromLong(self->last_exact); }
static PyObject *Searcher_get_stats(SearcherObject *self, void *c) {
    return Py_BuildValue("{sKsKsKsKsKsK}", "nodes", (unsigned long long)self->nodes,
                         "probes", (unsigned long long)self->st_probes, "hits", (unsigned long long)self->st_hits,
                         "cuts", (unsigned long long)self->st_cuts, "egdb", (unsigned long long)self->st_egdb,
                         "etc", (unsigned long long)self->st_etc);
}
static PyObject *k_list(const uint64_t *a) {
    PyObject *l = PyList_New(ST_K);
    for (int q = 0; l && q < ST_K; q++) {
        PyObject *x = PyLong_FromUnsignedLongLong(a[q]);
        if (!x) { Py_CLEAR(l); break; }
        PyList_SET_ITEM(l, q, x);
    }
    return l;
}

static PyObject *Searcher_get_by_seeds(SearcherObject *self, void *c) {
    return Py_BuildValue("{sNsNsNsNsN}", "nodes", k_list(self->st_k), "etc", k_list(self->st_etc_k),
                         "cuts", k_list(self->st_cut_k), "first_move_cutoffs", k_list(self->st_fh1_k),
                         "cutoffs", k_list(self->st_fh_k));
}
static PyObject *Searcher_get_egdb_seeds(SearcherObject *self, void *c) { return PyLong_FromLong(self->egdb_max); }

#include "_search_deepen.h"

static PyMethodDef Searcher_methods[] = {
    {"search", (PyCFunction)(void (*)(void))Searcher_search, METH_VARARGS | METH_KEYWORDS,
     "Alpha-beta value of a mover-relative board (depth < 0: exact); fail-soft in (alpha, beta); "
     "TimeoutError past time_limit seconds or node_limit nodes (0: none); an exact search may use "
     "several threads over the one table."},
    {"deepen", (PyCFunction)(void (*)(void))Searcher_deepen, METH_VARARGS | METH_KEYWORDS,
     "A move by iterative deepening within time_limit seconds (0: none), wholly without the GIL: "
     "(pit, value, exact, depth) of the deepest iteration finished, None if none was; depths 1, 3, ... "
     "up to max_depth, then (max_depth < 0, acyclic) an exact one; an acyclic iteration without horizon ends it."},
    {"clear", (PyCFunction)Searcher_clear, METH_NOARGS, "Empty the transposition table."},
    {"recall", (PyCFunction)Searcher_recall, METH_VARARGS,
     "From any thread: this searcher's current or next one-thread search stops soon and raises Recalled, so "
     "that it can be run again on more threads (the table keeps what it proved); recall(False) withdraws it."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Searcher_getset[] = {
    {"nodes", (getter)Searcher_get_nodes, NULL, "Nodes searched so far.", NULL},
    {"exact", (getter)Searcher_get_exact, NULL, "Whether the last search reached no depth horizon.", NULL},
    {"by_seeds", (getter)Searcher_get_by_seeds, NULL,
     "Counts by seeds in play (index k, the last index also counting more): interior nodes, enhanced transposition "
     "cut-offs, table cut-offs, cut-offs by the first move searched, all cut-offs by a searched move.", NULL},
    {"egdb_seeds", (getter)Searcher_get_egdb_seeds, NULL, "Largest seed count covered by databases.", NULL},
    {"stats", (getter)Searcher_get_stats, NULL,
     "Counts so far: nodes, table probes, hits and cut-offs, database reads, enhanced transposition cut-offs.",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject SearcherType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "bots._search.Searcher",
    .tp_basicsize = sizeof(SearcherObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A search with its own transposition table and optional endgame databases (one thread at a time).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Searcher_init,
    .tp_dealloc = (destructor)Searcher_dealloc,
    .tp_methods = Searcher_methods,
    .tp_getset = Searcher_getset,
};

/* ---------------------------------------------------------------- module functions */

static PyObject *mod_play(PyObject *m, PyObject *args) {
    RulesObject *R;
    PyObject *seq;
    int pit;
    if (!PyArg_ParseTuple(args, "O!Oi", &RulesType, &R, &seq, &pit)) return NULL;
    int16_t b[MAXP];
    if (board_from_py(R, seq, b)) return NULL;
    if (pit < 0 || pit >= R->h || !b[pit]) {
        PyErr_Format(PyExc_ValueError, "pit %d is not a non-empty house of the mover", pit);
        return NULL;
    }
    Child c;
    make_move(R, b, pit, &c);
    PyObject *board = board_to_py(R, c.b);
    if (!board) return NULL;
    return Py_BuildValue("(NiNN)", board, c.gain, PyBool_FromLong(c.extra), PyBool_FromLong(c.over));
}

static PyObject *mod_legal(PyObject *m, PyObject *args) {
    RulesObject *R;
    PyObject *seq;
    if (!PyArg_ParseTuple(args, "O!O", &RulesType, &R, &seq)) return NULL;
    int16_t b[MAXP];
    if (board_from_py(R, seq, b)) return NULL;
    PyObject *out = PyList_New(0);
    for (int p = 0; out && p < R->h; p++) {
        if (!b[p]) continue;
        PyObject *x = PyLong_FromLong(p);
        if (!x || PyList_Append(out, x)) { Py_XDECREF(x); Py_CLEAR(out); break; }
        Py_DECREF(x);
    }
    return out;
}

static PyObject *mod_rank(PyObject *m, PyObject *args) {
    RulesObject *R;
    PyObject *seq;
    if (!PyArg_ParseTuple(args, "O!O", &RulesType, &R, &seq)) return NULL;
    int16_t b[MAXP];
    if (board_from_py(R, seq, b)) return NULL;
    if (house_sum(R, b) > MAXLEVEL) { PyErr_SetString(PyExc_ValueError, "too many seeds to rank"); return NULL; }
    return PyLong_FromUnsignedLongLong(rank_board(R, b));
}

static PyObject *mod_level_size(PyObject *m, PyObject *args) {
    int houses, k;
    if (!PyArg_ParseTuple(args, "ii", &houses, &k)) return NULL;
    if (houses < 1 || houses > MAXH || k < 0 || k > MAXLEVEL) {
        PyErr_SetString(PyExc_ValueError, "houses or seeds out of range");
        return NULL;
    }
    return PyLong_FromUnsignedLongLong(binom[k + 2 * houses - 1][2 * houses - 1]);
}

static PyObject *mod_build_level(PyObject *m, PyObject *args) {
    RulesObject *R;
    int k;
    PyObject *levels, *outobj;
    unsigned long long start, stop;
    if (!PyArg_ParseTuple(args, "O!iOOKK", &RulesType, &R, &k, &levels, &outobj, &start, &stop)) return NULL;
    if (k < 1 || k > MAXLEVEL || R->majority) {
        PyErr_SetString(PyExc_ValueError, "bad level, or a majority-end variant");
        return NULL;
    }
    Py_buffer views[MAXLEVEL + 1], out;
    Level lv[MAXLEVEL + 1];
    char why[160];
    memset(views, 0, sizeof(views));
    if (PyObject_GetBuffer(outobj, &out, PyBUF_WRITABLE)) return NULL;
    uint64_t size = binom[k + 2 * R->h - 1][2 * R->h - 1];
    int got = 0, ok = (uint64_t)out.len == size && start <= stop && stop <= size;
    if (!ok) PyErr_SetString(PyExc_ValueError, "output size or range does not match the level");
    for (int j = 1; ok && j < k; j++) {
        PyObject *item = PySequence_GetItem(levels, j);
        if (!item || PyObject_GetBuffer(item, &views[j], PyBUF_SIMPLE)) { Py_XDECREF(item); ok = 0; break; }
        Py_DECREF(item);
        got = j;
        if (level_parse(&lv[j], views[j].buf, (uint64_t)views[j].len, R->h, j, why, sizeof why)) {
            PyErr_SetString(PyExc_ValueError, why);
            ok = 0;
        }
    }
    if (ok) {
        Builder B = {R, k, lv, (int8_t *)out.buf};
        Py_BEGIN_ALLOW_THREADS
        build_range(&B, start, stop);
        Py_END_ALLOW_THREADS
    }
    for (int j = 1; j <= got; j++) PyBuffer_Release(&views[j]);
    PyBuffer_Release(&out);
    if (!ok) return NULL;
    if (interrupted()) { PyErr_SetNone(PyExc_KeyboardInterrupt); return NULL; }
    Py_RETURN_NONE;
}

/* The values of a level as one signed byte per rank (a buffer of level_size(houses, k) bytes), or -1 with an
   exception set. */
static int values_view(PyObject *obj, int houses, int k, Py_buffer *view, int writable, uint64_t *positions) {
    if (houses < 1 || houses > MAXH || k < 1 || k > MAXLEVEL) {
        PyErr_SetString(PyExc_ValueError, "houses or seeds out of range");
        return -1;
    }
    *positions = binom[k + 2 * houses - 1][2 * houses - 1];
    if (PyObject_GetBuffer(obj, view, writable ? PyBUF_WRITABLE : PyBUF_SIMPLE)) return -1;
    if ((uint64_t)view->len != *positions) {
        PyErr_SetString(PyExc_ValueError, "the values do not have one byte per position of the level");
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

static PyObject *mod_level_model(PyObject *m, PyObject *args) {
    int houses, k;
    PyObject *obj;
    if (!PyArg_ParseTuple(args, "iiO", &houses, &k, &obj)) return NULL;
    Py_buffer view;
    uint64_t positions;
    if (values_view(obj, houses, k, &view, 0, &positions)) return NULL;
    uint8_t pred[(MAXH + 1) * (MAXH + 1)];
    int shift = 0, rc;
    Py_BEGIN_ALLOW_THREADS
    rc = v2_model(houses, k, view.buf, positions, &shift, pred);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    if (rc == -2) { PyErr_SetNone(PyExc_KeyboardInterrupt); return NULL; }
    if (rc) { PyErr_Format(PyExc_ValueError, "a value out of -%d..%d", k, k); return NULL; }
    return Py_BuildValue("(iy#)", shift, (const char *)pred, (Py_ssize_t)((houses + 1) * (houses + 1)));
}

static PyObject *mod_encode_level(PyObject *m, PyObject *args) {
    int houses, k, shift;
    PyObject *obj, *outobj;
    const char *pred;
    Py_ssize_t npred;
    if (!PyArg_ParseTuple(args, "iiOiy#O", &houses, &k, &obj, &shift, &pred, &npred, &outobj)) return NULL;
    Py_buffer view, out;
    uint64_t positions;
    if (values_view(obj, houses, k, &view, 0, &positions)) return NULL;
    const uint64_t blocks = v2_blocks(positions), room = blocks * 64 + v2_groups(blocks) * 8 + positions;
    if (npred != (houses + 1) * (houses + 1) || shift < 0 || shift > 1) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "a shift of 0 or 1 and (houses + 1) ** 2 predictions");
        return NULL;
    }
    if (PyObject_GetBuffer(outobj, &out, PyBUF_WRITABLE)) { PyBuffer_Release(&view); return NULL; }
    if ((uint64_t)out.len < room) {
        PyBuffer_Release(&view); PyBuffer_Release(&out);
        PyErr_Format(PyExc_ValueError, "the output needs %llu bytes", (unsigned long long)room);
        return NULL;
    }
    uint64_t nexc;
    Py_BEGIN_ALLOW_THREADS
    nexc = v2_encode(houses, k, view.buf, positions, shift, (const uint8_t *)pred, out.buf);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view); PyBuffer_Release(&out);
    if (interrupted()) { PyErr_SetNone(PyExc_KeyboardInterrupt); return NULL; }
    return PyLong_FromUnsignedLongLong(nexc);
}

static PyObject *mod_decode_level(PyObject *m, PyObject *args) {
    int houses, k;
    PyObject *obj, *outobj;
    if (!PyArg_ParseTuple(args, "iiOO", &houses, &k, &obj, &outobj)) return NULL;
    Py_buffer view, out;
    uint64_t positions;
    if (values_view(outobj, houses, k, &out, 1, &positions)) return NULL;
    if (PyObject_GetBuffer(obj, &view, PyBUF_SIMPLE)) { PyBuffer_Release(&out); return NULL; }
    Level L;
    char why[160];
    int rc = level_parse(&L, view.buf, (uint64_t)view.len, houses, k, why, sizeof why);
    if (rc) PyErr_SetString(PyExc_ValueError, why);
    else {
        Py_BEGIN_ALLOW_THREADS
        rc = level_decode(&L, positions, out.buf);
        Py_END_ALLOW_THREADS
        if (rc) PyErr_SetNone(PyExc_KeyboardInterrupt);
    }
    PyBuffer_Release(&view); PyBuffer_Release(&out);
    if (rc) return NULL;
    Py_RETURN_NONE;
}

static PyObject *mod_warm(PyObject *m, PyObject *args) {
    PyObject *obj;
    if (!PyArg_ParseTuple(args, "O", &obj)) return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(obj, &view, PyBUF_SIMPLE)) return NULL;
    const volatile uint8_t *p = (const volatile uint8_t *)view.buf;
    Py_ssize_t len = view.len, done = 0;
    Py_BEGIN_ALLOW_THREADS
    /* One read a page: a mapped level's pages come in from the disk now (whole 2 MiB folios where the mapping is
       advised huge pages) and are mapped into this process, instead of one fault at a time during a move. */
    for (; done < len && !interrupted(); done += 4096) (void)p[done];
    if (done > len) done = len;
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    return PyLong_FromSsize_t(done);
}

static PyObject *mod_interrupt(PyObject *m, PyObject *args) {
    int on = 1;
    if (!PyArg_ParseTuple(args, "|p", &on)) return NULL;
    __atomic_store_n(&g_interrupt, on, __ATOMIC_RELAXED);
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"play", mod_play, METH_VARARGS, "Sow a house of a mover-relative board: (board, gain, extra, over)."},
    {"legal", mod_legal, METH_VARARGS, "Houses the mover may sow from."},
    {"rank", mod_rank, METH_VARARGS, "Combinatorial rank of a board's houses among boards with as many seeds."},
    {"level_size", mod_level_size, METH_VARARGS, "Number of house contents of k seeds on 2*houses houses."},
    {"build_level", mod_build_level, METH_VARARGS,
     "Fill ranks start..stop of database level k; `out` starts filled with -128 (unknown)."},
    {"level_model", mod_level_model, METH_VARARGS,
     "A level's format v2 model from its values (one byte per rank): (shift, predictions by empty houses)."},
    {"encode_level", mod_encode_level, METH_VARARGS,
     "Encode a level's values to format v2 after its header (blocks, group words, exceptions) into `out`: "
     "the exceptions written."},
    {"decode_level", mod_decode_level, METH_VARARGS,
     "Every value of a level's bytes (format v1 or v2) into `out`, one signed byte per rank."},
    {"warm", mod_warm, METH_VARARGS,
     "Read a byte of every page of a buffer (a mapped database level) without the GIL, so that its pages are in "
     "memory and mapped before a search probes them: the bytes read through (fewer once interrupted)."},
    {"interrupt", mod_interrupt, METH_VARARGS,
     "Stop every search and database build of the process at once (KeyboardInterrupt); interrupt(False) "
     "lets them run again."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef search_module = {
    PyModuleDef_HEAD_INIT, "bots._search", "C search core of the Kalah Arena bots.", -1, module_methods,
};

PyMODINIT_FUNC PyInit__search(void) {
    init_binom();
    if (PyType_Ready(&RulesType) < 0 || PyType_Ready(&SearcherType) < 0) return NULL;
    PyObject *mod = PyModule_Create(&search_module);
    if (!mod) return NULL;
    RecalledError = PyErr_NewExceptionWithDoc("bots._search.Recalled",
                                              "A one-thread search stopped by Searcher.recall().", NULL, NULL);
    if (!RecalledError || PyModule_AddObjectRef(mod, "Rules", (PyObject *)&RulesType) < 0 ||
        PyModule_AddObjectRef(mod, "Searcher", (PyObject *)&SearcherType) < 0 ||
        PyModule_AddObjectRef(mod, "Recalled", RecalledError) < 0) {
        Py_DECREF(mod);
        return NULL;
    }
    return mod;
}
