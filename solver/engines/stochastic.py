"""The core both stochastic engines share: checked arrays, schedule, exact layers, policy evaluation.

:mod:`~solver.engines.value_iteration` (chance nodes) and :mod:`~solver.engines.simultaneous`
(secret choices) solve a :class:`~solver.engines.graph.Graph` the same way around their own
node rules, with the pieces here:

* :func:`prepare`: the graph checked (moves, probabilities, tiers) and its per-move arrays
  (:class:`Prepared`, with the :class:`System` the other functions read);
* :func:`build_schedule`: tiers from the highest, then strongly connected components in
  topological order (:class:`Schedule` of :class:`Layer` s: acyclic positions computed once,
  exactly; cyclic ones iterated);
* :func:`edges_of`, :func:`combine`, :func:`group_max`, :func:`edge_max`: one layer's moves,
  and the max (decision) or expectation (chance) over them;
* :func:`iterate_loop`: a cyclic set of decision and chance nodes, by discounted block
  Gauss-Seidel sweeps finished by strategy iteration (Hoffman-Karp, exact sparse solves);
* :func:`first_best`: each decision node's best move;
* :func:`evaluate_policy`: win and loss probabilities under fixed moves (a linear system:
  exact on acyclic layers, a sparse solve polished by sweeps on cyclic ones);
* :class:`StochasticSolution`, what both engines return; :func:`validate_tol`; ``Progress``.

Values are expected results from the side to move (+1 win, -1 loss, 0 tie or endless play).
This module imports no engine: the engines import it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
from numba import njit
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from solver.core.game import NodeKind
from solver.core.arrays import CodedFloats, ranges as _ranges, unique
from solver.engines.graph import Graph

#: callback(stage, tier, sweeps_so_far, residual) for progress reports
Progress = Callable[[str, int, int, float], None]

_DECISION = int(NodeKind.DECISION)
_CHANCE = int(NodeKind.CHANCE)
_TERMINAL = int(NodeKind.TERMINAL)


@dataclass
class StochasticSolution:
    """Expected results and win probabilities of every position, from the side to move.

    * ``value``: ``float64[n]`` expected result (+1 win, -1 loss, 0 tie/endless play).
    * ``p_win`` / ``p_loss``: ``float64[n]`` probability that the side to move wins / loses under
      the optimal strategies of :attr:`best` (endless play counts for neither);
      ``value == p_win - p_loss``.
    * ``best``: ``int64[n]`` at decision nodes the **global edge index** of the chosen move
      (``graph.child[best[i]]`` is the child row, ``best[i] - graph.offsets[i]`` the index in the
      list of legal actions); -1 at other nodes.
    * ``sweeps``: Gauss-Seidel sweeps of the value iteration, summed over the cyclic components.
    * ``residual``: the largest violation of a Bellman equation by the final values (0.0 when
      the graph is acyclic; below the absolute
      :data:`~solver.engines.value_iteration.CERTIFICATE_TOL` when certified, whatever
      ``tol`` was; with simultaneous nodes below
      :data:`solver.engines.simultaneous.CERTIFICATE_THRESHOLD` when certified).
    * ``converged``: every component converged and the certificate holds.
    * ``stats``: details (components, per-tier sweeps, rounds, certificate, last sweep change).
    * ``strategies``: at simultaneous nodes, row -> ``(x, y)``: player 0's optimal mixed strategy
      over its actions and player 1's over its own (empty without simultaneous nodes).
    """

    value: np.ndarray
    p_win: np.ndarray
    p_loss: np.ndarray
    best: np.ndarray
    sweeps: int
    residual: float
    converged: bool = True
    stats: dict[str, Any] = field(default_factory=dict)
    strategies: dict[int, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)

    def local_best(self, graph: Graph) -> np.ndarray:
        """``int64[n]``: ``best`` as an index into each position's list of actions (-1 elsewhere)."""
        out = np.full(len(self.best), -1, dtype=np.int64)
        has = self.best >= 0
        out[has] = self.best[has] - graph.offsets[:-1][has]
        return out


def _terminal_only(probs: Any, terminal: np.ndarray) -> np.ndarray:
    """``np.where(terminal, probs, 0.0)`` as float64; ``probs`` itself (not copied: it is only
    read) when it already is that, bit for bit (float64 and +0.0 off the terminal rows, as the
    tiered dice solver builds it)."""
    probs = np.asarray(probs)
    if probs.dtype == np.float64 and not probs.view(np.int64)[~terminal].any():
        return probs
    return np.where(terminal, np.asarray(probs, dtype=np.float64), 0.0)


def terminal_ends(result: Any, terminal: np.ndarray,
                  terminal_probs: tuple[np.ndarray, np.ndarray] | None) -> tuple[np.ndarray, np.ndarray]:
    """``(end_win, end_loss)``: ``float64[n]`` win and loss probabilities of the side to move at
    the terminal rows (0.0 elsewhere), from the results' signs or, where the caller gives them
    (``terminal_probs``: finished positions outside the graph), from those probabilities."""
    if terminal_probs is None:
        result = np.asarray(result, dtype=np.float64)
        return np.where(terminal & (result > 0), 1.0, 0.0), np.where(terminal & (result < 0), 1.0, 0.0)
    return _terminal_only(terminal_probs[0], terminal), _terminal_only(terminal_probs[1], terminal)


def validate_tol(tol: float) -> None:
    """``tol`` must be a finite number above 0 (a clear error otherwise)."""
    try:
        ok = bool(np.isfinite(tol)) and tol > 0
    except TypeError:
        ok = False
    if not ok:
        raise ValueError(f"tol must be a finite number above 0, got {tol!r}")


def index_dtype(size: int) -> type:
    """int32 for indices below ``size`` (and sums of two of them) while they fit, else int64:
    half the memory of the int64 arrays of moves, and the same values."""
    return np.int32 if size < 2**30 else np.int64


@dataclass
class Prepared:
    """The checked arrays of a graph that every stochastic engine starts from."""

    sys: "System"
    kind: np.ndarray
    offsets: np.ndarray
    child: np.ndarray
    deg: np.ndarray
    parent: np.ndarray
    to_move: np.ndarray
    same: np.ndarray
    chance_edge: np.ndarray
    prob: np.ndarray
    tiers: np.ndarray

    @property
    def sign(self) -> np.ndarray:
        """+1 where a move's child has the same side to move, else -1 (built when asked: one
        float per move is not kept for the whole solve)."""
        return np.where(self.same, 1.0, -1.0)


def checked_moves(graph: Graph) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(kind int8[n], offsets int64[n + 1], child, deg int64[n])`` of a graph whose every
    non-terminal position has a move and no terminal one has (a clear error otherwise); the
    children keep the graph's integer type (int32 or int64)."""
    kind = np.asarray(graph.kind, dtype=np.int8)
    offsets = np.asarray(graph.offsets, dtype=np.int64)
    child = np.asarray(graph.child)
    if child.dtype not in (np.int32, np.int64):
        child = child.astype(np.int64)
    deg = np.diff(offsets)
    inner = kind != _TERMINAL
    if np.any(deg[inner] == 0):
        bad = int(np.flatnonzero(inner & (deg == 0))[0])
        raise ValueError(f"position {int(graph.keys[bad])} is not terminal but has no moves")
    if np.any(deg[~inner] != 0):
        raise ValueError("a terminal position has moves")
    return kind, offsets, child, deg


def prepare(graph: Graph, tiers: np.ndarray | None) -> Prepared:
    """Check the graph (moves, probabilities, tiers) and derive the per-edge arrays."""
    n = graph.n
    # Memory: node kinds and sides to move stay int8 (the graph's own arrays, not int64 copies),
    # the children keep the graph's integer type (int32 from the tiered dice solver) and the
    # parents are int32 while the rows fit. They are only compared and used as indices, so the
    # results are those of int64 arrays.
    kind, offsets, child, deg = checked_moves(graph)
    parent = np.repeat(np.arange(n, dtype=index_dtype(n)), deg)
    to_move = np.asarray(graph.to_move)
    same = to_move[child] == to_move[parent]
    chance_edge = kind[parent] == _CHANCE
    if graph.probs is None:
        if np.any(chance_edge):
            raise ValueError("the graph has chance nodes but no probabilities")
        prob = np.ones(len(child), dtype=np.float64)
    else:
        # a CodedFloats (one-byte codes into a table of float64, from the tiered dice solver) is
        # kept coded: it is only indexed (``prob[e]``), which gives the same float64 values
        # (decoded where simultaneous nodes are, whose engine writes its strategies into a copy)
        coded = isinstance(graph.probs, CodedFloats) and not np.any(kind == int(NodeKind.SIMULTANEOUS))
        prob = graph.probs if coded else np.asarray(graph.probs, dtype=np.float64)
        if not bool(np.all(prob[~chance_edge] == 1.0)):  # not 1.0 off chance nodes: a copy that is
            prob = np.where(chance_edge, np.asarray(prob, dtype=np.float64), 1.0)
        # (else the graph's own array is used: never written to here)
    if tiers is None:  # one tier: no move can fall (and no two int64 arrays per move to check it)
        tiers = np.zeros(n, dtype=np.int8)
    else:
        tiers = np.asarray(tiers, dtype=np.int64)
        if len(tiers) != n:
            raise ValueError(f"tiers has {len(tiers)} entries for {n} positions")
        if np.any(tiers[child] < tiers[parent]):
            raise ValueError("an edge goes to a lower tier; tiers must never fall along a move")
    sys = System(n, kind, offsets, child, deg, to_move)
    return Prepared(sys, kind, offsets, child, deg, parent, to_move, same, chance_edge, prob, tiers)


def first_best(kind: np.ndarray, parent: np.ndarray, offsets: np.ndarray, deg: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``int64[n]``: at decision nodes the first edge with the largest ``q``, else -1."""
    n = len(deg)
    best = np.full(n, -1, dtype=np.int64)
    top = edge_max(q, offsets, deg)
    dec_edge = kind[parent] == _DECISION
    e = np.flatnonzero(dec_edge & (q >= top[parent]))
    if len(e):
        p = parent[e]
        first = np.r_[True, p[1:] != p[:-1]]
        best[p[first]] = e[first]
    return best


@dataclass
class System:
    n: int
    kind: np.ndarray
    offsets: np.ndarray
    child: np.ndarray
    deg: np.ndarray
    to_move: np.ndarray


@dataclass
class Layer:
    """Positions at one height of a tier's component order.

    ``flat``: positions of acyclic components (computed once, exactly); ``loop``: positions of
    cyclic components (iterated); ``tier``: for progress reports.
    """

    tier: int
    flat: np.ndarray
    loop: np.ndarray


@dataclass
class Schedule:
    layers: list[Layer]
    stats: dict[str, int]
    #: per position, the index of the layer whose cyclic part holds it (-1: not cyclic)
    loop_id: np.ndarray


def group_max(loc: np.ndarray, x: np.ndarray, m: int) -> np.ndarray:
    """Per local position, the largest ``x`` of its entries (``loc`` sorted; -inf without)."""
    out = np.full(m, -np.inf)
    if len(loc):
        starts = np.flatnonzero(np.r_[True, loc[1:] != loc[:-1]])
        out[loc[starts]] = np.maximum.reduceat(x, starts)
    return out


def edge_max(x: np.ndarray, offsets: np.ndarray, deg: np.ndarray) -> np.ndarray:
    """Per position, the largest ``x`` over its edges (-inf without edges)."""
    out = np.full(len(deg), -np.inf)
    has = deg > 0
    if has.any():
        out[has] = np.maximum.reduceat(x, offsets[:-1][has])
    return out


def build_schedule(sys: System, tiers: np.ndarray) -> Schedule:
    """Order the positions: tiers from the highest, then components in topological order."""
    layers: list[Layer] = []
    loop_id = np.full(sys.n, -1, dtype=np.int32)  # layer numbers: int32 is plenty
    totals = {"components": 0, "cyclic_components": 0, "cyclic_positions": 0, "layers": 0}
    inner = sys.kind != _TERMINAL
    idx_type = index_dtype(sys.n)  # local indices (int32 while they fit: two arrays per move)
    local = np.full(sys.n, -1, dtype=idx_type)
    for tier in unique(tiers[inner])[::-1].tolist():
        nodes = np.flatnonzero(inner & (tiers == tier))
        m = len(nodes)
        local[nodes] = np.arange(m)
        e = _ranges(sys.offsets[nodes], sys.deg[nodes])
        src = np.repeat(np.arange(m, dtype=idx_type), sys.deg[nodes])
        dst = local[sys.child[e]]
        del e
        keep = dst >= 0
        src, dst = src[keep], dst[keep]
        del keep
        mat = csr_matrix((np.ones(len(src), dtype=np.int8), (src, dst)), shape=(m, m))
        ncomp, label = connected_components(mat, directed=True, connection="strong")
        size = np.bincount(label, minlength=ncomp)
        cyclic = size > 1
        loops = src[src == dst]
        cyclic[label[loops]] = True
        # component graph and longest-path height (sinks = 0)
        cu, cv = label[src], label[dst]
        cross = cu != cv
        # 64 bits: SciPy's labels are int32, and label * ncomp wraps past 46,341 components
        pairs = unique(cu[cross].astype(np.int64) * ncomp + cv[cross])
        cu, cv = pairs // ncomp, pairs % ncomp
        outdeg = np.bincount(cu, minlength=ncomp)
        order = np.argsort(cv, kind="stable")
        rin = np.zeros(ncomp + 1, dtype=np.int64)
        np.cumsum(np.bincount(cv, minlength=ncomp), out=rin[1:])
        preds = cu[order]
        height = np.full(ncomp, -1, dtype=np.int64)
        frontier = np.flatnonzero(outdeg == 0)
        h = 0
        while len(frontier):
            height[frontier] = h
            pe = _ranges(rin[frontier], rin[frontier + 1] - rin[frontier])
            p = preds[pe]
            np.subtract.at(outdeg, p, 1)
            frontier = unique(p[outdeg[p] == 0])
            h += 1
        node_height = height[label]
        node_cyclic = cyclic[label]
        by_height = np.argsort(node_height, kind="stable")
        bounds = np.searchsorted(node_height[by_height], np.arange(h + 1))
        for k in range(h):
            members = by_height[bounds[k] : bounds[k + 1]]
            cyc = node_cyclic[members]
            loop = np.sort(nodes[members[cyc]])
            loop_id[loop] = len(layers)
            layers.append(Layer(tier, np.sort(nodes[members[~cyc]]), loop))
        totals["components"] += int(ncomp)
        totals["cyclic_components"] += int(cyclic.sum())
        totals["cyclic_positions"] += int(node_cyclic.sum())
        totals["layers"] += h
        local[nodes] = -1
    return Schedule(layers, totals, loop_id)


def edges_of(sys: System, nodes: np.ndarray, active: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """``(edge ids, local parent index)`` of the positions ``nodes`` (only ``active`` edges)."""
    e = _ranges(sys.offsets[nodes], sys.deg[nodes])
    if len(sys.child) < 2**31:  # edge ids in int32 while they fit (half the memory, same ids)
        e = e.astype(np.int32)
    # int32 while ``loc + len(nodes)`` fits (the policy solve stacks two copies): the same values
    loc = np.repeat(np.arange(len(nodes), dtype=index_dtype(len(nodes))), sys.deg[nodes])
    if active is not None:
        keep = active[e]
        e, loc = e[keep], loc[keep]
    return e, loc


def combine(
    kinds: np.ndarray, loc: np.ndarray, contrib: np.ndarray, m: int, base_sum: np.ndarray, base_max: np.ndarray
) -> np.ndarray:
    """Per position: chance nodes sum their edge contributions, decision nodes take the max.

    ``loc`` must be sorted (edges grouped by position). ``base_sum``/``base_max`` are the parts
    from edges already final (0 / -inf when none).
    """
    total = base_sum + np.bincount(loc, weights=contrib, minlength=m)
    out = np.where(kinds == _DECISION, base_max, total)
    if len(loc):
        starts = np.flatnonzero(np.r_[True, loc[1:] != loc[:-1]])
        seg_max = np.maximum.reduceat(contrib, starts)
        owners = loc[starts]
        dec = kinds[owners] == _DECISION
        out[owners[dec]] = np.maximum(base_max[owners[dec]], seg_max[dec])
    return out


def iterate_loop(
    sys: System,
    nodes: np.ndarray,
    value: np.ndarray,
    weight: np.ndarray,
    lam: float,
    active: np.ndarray | None,
    in_loop: np.ndarray,
    tol: float,
    max_sweeps: int,
    warmup_sweeps: int,
) -> tuple[int, float, bool, int]:
    """Solve a cyclic set of positions (edges inside it discounted by ``lam``).

    ``warmup_sweeps`` block Gauss-Seidel sweeps (one block per node kind), then, unless they
    already converged, exact strategy iteration (:func:`_strategy_iteration`) and one more sweep
    whose largest change is the reported residual. With ``warmup_sweeps=0``: sweeps only, until
    the change is below ``tol`` (slow: the discount is tiny). Returns
    ``(sweeps, residual, converged, strategy evaluations)``.
    """
    kind = sys.kind
    in_loop[nodes] = True
    node_kind = kind[nodes]

    def moves(of: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(local parent, child row, weight, inside the set)`` of the (active) moves of the
        positions ``of``: each move's weight times ``lam`` when it stays inside the set."""
        e, loc = edges_of(sys, of, active)
        ch = sys.child[e]
        internal = in_loop[ch]
        w = weight[e] * np.where(internal, lam, 1.0)
        return loc, ch, w, internal

    def build_blocks() -> list[tuple]:
        """The sweeps' arrays, per node kind: the moves inside the set and the fixed part of
        each position's equation from the moves that leave it (their children's values do not
        change while the set is solved, so building again gives the same arrays). Built from
        each kind's own moves, so the moves of the whole set are not held beside them: the
        same arrays as selecting each kind's moves from those of the whole set."""
        blocks = []
        for k in (_CHANCE, _DECISION):
            sel = node_kind == k
            if not sel.any():
                continue
            bn = nodes[sel]
            bloc, bch, bw, bint = moves(bn)
            ext = ~bint
            contrib_ext = bw[ext] * value[bch[ext]]
            base_sum = np.bincount(bloc[ext], weights=contrib_ext, minlength=len(bn))
            base_max = group_max(bloc[ext], contrib_ext, len(bn))
            bloc, bch, bw = bloc[bint], bch[bint], bw[bint]
            starts = np.flatnonzero(np.r_[True, bloc[1:] != bloc[:-1]]) if len(bloc) else bloc
            blocks.append((bn, k, bloc, bch, bw, base_sum, base_max, starts, bloc[starts]))
        return blocks

    blocks = build_blocks()

    def sweep() -> float:
        res = 0.0
        for bn, k, bloc, bch, bw, base_sum, base_max, starts, owners in blocks:
            contrib = bw * value[bch]
            if k == _CHANCE:
                new = base_sum + np.bincount(bloc, weights=contrib, minlength=len(bn))
            else:
                new = base_max.copy()
                if len(starts):
                    new[owners] = np.maximum(base_max[owners], np.maximum.reduceat(contrib, starts))
            diff = np.abs(new - value[bn])
            if len(diff):
                res = max(res, float(diff.max()))
            value[bn] = new
        return res

    sweeps = 0
    evaluations = 0
    residual = np.inf
    while sweeps < max_sweeps:
        residual = sweep()
        sweeps += 1
        if residual < tol:
            break
        if warmup_sweeps and sweeps >= warmup_sweeps:
            # the sweeps' copies of the moves (three arrays per move) are let go while strategy
            # iteration holds the moves of the whole set; built again for the sweeps after
            blocks = []
            evaluations = _strategy_iteration(sys, nodes, *moves(nodes), value)
            blocks = build_blocks()
            if evaluations < 0:  # a failed solve: plain sweeps only
                warmup_sweeps = 0
                evaluations = 0
            else:
                residual = sweep()
                sweeps += 1
                break
    in_loop[nodes] = False
    return sweeps, float(residual), bool(residual < tol), evaluations


def reaching(m: int, src: np.ndarray, dst: np.ndarray, sources: np.ndarray) -> np.ndarray:
    """``bool[m]``: local nodes from which some source is reachable along edges ``src -> dst``
    (a breadth-first search back from the sources over the reversed edges, compiled;
    ``tests/test_value_iteration.py`` checks it against a search level by level in numpy)."""
    reach = np.zeros(m, dtype=bool)
    if not len(sources):
        return reach
    src = np.asarray(src)
    dst = np.asarray(dst)
    _reach_back(m, src if src.dtype in (np.int32, np.int64) else src.astype(np.int64),
                dst if dst.dtype in (np.int32, np.int64) else dst.astype(np.int64),
                np.asarray(sources, dtype=np.int64), reach)
    return reach


@njit(cache=True, nogil=True)
def _reach_back(m, src, dst, sources, reach):  # pragma: no cover - compiled
    start = np.zeros(m + 1, np.int64)  # the edges into each node, by a counting sort
    for k in range(len(dst)):
        start[dst[k] + 1] += 1
    for i in range(m):
        start[i + 1] += start[i]
    fill = start[:-1].copy()
    preds = np.empty(len(dst), np.int64)
    for k in range(len(dst)):
        preds[fill[dst[k]]] = src[k]
        fill[dst[k]] += 1
    queue = np.empty(m, np.int64)
    tail = 0
    for s in sources:
        if not reach[s]:
            reach[s] = True
            queue[tail] = s
            tail += 1
    head = 0
    while head < tail:
        v = queue[head]
        head += 1
        for k in range(start[v], start[v + 1]):
            u = preds[k]
            if not reach[u]:
                reach[u] = True
                queue[tail] = u
                tail += 1


def linear_solve(
    m: int,
    entries: list[np.ndarray],
    keep: np.ndarray,
    passthrough: np.ndarray,
) -> np.ndarray | None:
    """Solve ``x = b + A x`` on the unknowns ``keep`` (the others are 0); ``None`` on failure.

    ``passthrough`` marks rows with at most one entry (decision nodes under fixed strategies):
    they are eliminated first (chains followed by pointer doubling), so the sparse LU sees only
    the other rows (chance nodes), a much smaller system.

    ``entries`` is ``[rows, cols, vals, b]`` (``A`` and the constant part) and is emptied: the
    solve lets each array go as soon as it has used it (the caller keeps no other reference), so
    they are not held beside the reduced system's arrays and the factorisation, the solve's
    memory peak (as are the full-length right-hand side and the result: only the unknowns that
    are solved for are held during the factorisation, the result is made after it).
    """
    from scipy.sparse import identity
    from scipy.sparse.linalg import spsolve

    rows, cols, vals, b = entries
    entries.clear()
    if not keep.any():
        return np.zeros(m)
    # x_i = coef_i * x_ptr_i + const_i for pass-through rows (row indices in int32 while they fit)
    ptr = np.full(m, -1, dtype=index_dtype(m))
    coef = np.zeros(m)
    const = np.where(passthrough & keep, b, 0.0)
    rhs = np.where(passthrough, 0.0, b)
    del b
    single = passthrough[rows]
    ptr[rows[single]] = cols[single]
    coef[rows[single]] = vals[single]
    ptr[~keep] = -1
    coef[~keep] = 0.0
    for _ in range(64):
        idx = np.flatnonzero(passthrough & (ptr >= 0))
        idx = idx[passthrough[ptr[idx]]]
        if not len(idx):
            break
        j = ptr[idx]
        const[idx] = const[idx] + coef[idx] * const[j]
        coef[idx] = coef[idx] * coef[j]
        ptr[idx] = ptr[j]
    else:  # circles of pass-through rows only: they never leave, so 0
        stuck = passthrough & (ptr >= 0)
        stuck[stuck] = passthrough[ptr[stuck]]
        ptr[stuck], coef[stuck], const[stuck] = -1, 0.0, 0.0
    # substitute the pass-through rows into the others
    other = ~single
    r, c0, v0 = rows[other], cols[other], vals[other]
    del single, other, rows, cols, vals
    via = passthrough[c0]
    rhs += np.bincount(r[via], weights=v0[via] * const[c0[via]], minlength=m)
    v = np.where(via, v0 * coef[c0], v0)
    del v0
    c = np.where(via, ptr[c0], c0)
    del c0, via
    ok = (c >= 0) & keep[r]
    c = np.maximum(c, 0)
    ok &= keep[c]
    solve = keep & ~passthrough
    idx = np.flatnonzero(solve)
    rhs = rhs[idx]  # (the full-length one is let go: only these rows are solved for)
    sol = None
    if len(idx):
        pos = np.full(m, -1, dtype=index_dtype(m))
        pos[idx] = np.arange(len(idx))
        ok &= solve[c]
        k = len(idx)
        r, c, v = r[ok], c[ok], v[ok]  # (each the only copy of its array: one at a time)
        del ok
        a = csr_matrix((v, (pos[r], pos[c])), shape=(k, k))
        # the per-entry arrays and the matrix are let go before the factorisation, the peak
        del r, c, v, pos
        lhs = (identity(k, format="csr") - a).tocsc()
        del a
        try:
            with np.errstate(all="ignore"):
                sol = spsolve(lhs, rhs)
        except Exception:  # a singular or failing factorisation: skip the acceleration
            return None
        del lhs, rhs
        sol = np.asarray(sol, dtype=np.float64).reshape(-1)
        if not np.all(np.isfinite(sol)):
            return None
    x = np.zeros(m)
    if sol is not None:
        x[idx] = sol
    pt = np.flatnonzero(passthrough & keep)
    x[pt] = const[pt] + np.where(ptr[pt] >= 0, coef[pt] * x[np.maximum(ptr[pt], 0)], 0.0)
    return x


def _strategy_iteration(
    sys: System,
    nodes: np.ndarray,
    loc: np.ndarray,
    ch: np.ndarray,
    w: np.ndarray,
    internal: np.ndarray,
    value: np.ndarray,
    max_evaluations: int = 10_000,
) -> int:
    """Hoffman-Karp strategy iteration on a cyclic set; sets ``value[nodes]`` exactly.

    Start from the greedy moves under the current values. Player 1 improves (switches to a
    strictly better move wherever there is one, values re-evaluated exactly each time) until
    it cannot: a best response; then player 0 improves once, and so on until neither can.
    With the discount this ends after finitely many exact evaluations, at the solution of the
    discounted equations. Returns the number of evaluations, -1 when a solve fails.
    """
    m = len(nodes)
    if m == 0 or not len(loc):
        return 0
    node_kind = sys.kind[nodes]
    dec_edge = node_kind[loc] == _DECISION
    starts = np.flatnonzero(np.r_[True, loc[1:] != loc[:-1]])
    owners = loc[starts]
    passthrough = node_kind == _DECISION

    def greedy(current: np.ndarray | None, who: int | None) -> tuple[np.ndarray, bool]:
        """The choice mask after switching ``who``'s nodes to strictly better moves."""
        c = value[ch]
        c *= w  # (the products of ``w * value[ch]``, without a second array per move)
        node_max = np.full(m, -np.inf)
        node_max[owners] = np.maximum.reduceat(c, starts)
        top = c >= node_max[loc]
        if current is None:
            cand = np.flatnonzero(dec_edge & top)
            first = cand[np.r_[True, loc[cand][1:] != loc[cand][:-1]]] if len(cand) else cand
            out = np.zeros(len(c), dtype=bool)
            out[first] = True
            return out, True
        now = np.full(m, -np.inf)
        now[loc[current]] = c[current]
        margin = 1e-13 * np.maximum(1.0, np.abs(node_max))
        switch = (node_max > now + margin) & (sys.to_move[nodes] == who) & passthrough
        if not switch.any():
            return current, False
        cand = np.flatnonzero(dec_edge & top & switch[loc])
        first = cand[np.r_[True, loc[cand][1:] != loc[cand][:-1]]] if len(cand) else cand
        out = current & ~switch[loc]
        out[first] = True
        return out, True

    def evaluate(choice: np.ndarray) -> bool:
        # the masks are let go as soon as they are used, and the local index of each used move's
        # child is looked up here rather than held for every move (an int64 per move)
        use = ~dec_edge | choice
        ue = use & ~internal
        b = np.bincount(loc[ue], weights=w[ue] * value[ch[ue]], minlength=m)
        exits = loc[ue]
        del ue
        ui = use & internal
        del use
        rows, cols, vals = loc[ui], np.searchsorted(nodes, ch[ui]), w[ui]
        del ui
        keep = reaching(m, rows, cols, exits)
        del exits
        entries = [rows, cols, vals, b]
        del rows, cols, vals, b  # the solve lets them go
        x = linear_solve(m, entries, keep, passthrough)
        if x is None:
            return False
        value[nodes] = x
        return True

    choice, _ = greedy(None, None)
    evaluations = 0
    while evaluations < max_evaluations:
        if not evaluate(choice):
            return -1
        evaluations += 1
        choice, changed = greedy(choice, 1)
        if changed:
            continue
        choice, changed = greedy(choice, 0)
        if not changed:
            break
    return evaluations


def evaluate_policy(
    sys: System,
    schedule: Schedule,
    p_win: np.ndarray,
    p_loss: np.ndarray,
    prob: np.ndarray,
    same: np.ndarray,
    active: np.ndarray,
    *,
    tol: float,
    max_sweeps: int,
    progress: Progress | None,
) -> tuple[int, float, bool]:
    """Win and loss probabilities of the side to move when everyone follows the fixed moves.

    A linear system, solved layer by layer like the values: exact on acyclic layers, a sparse
    direct solve on cyclic ones, each checked (and polished) by sweeps until the change < tol.
    """
    in_loop = np.zeros(sys.n, dtype=bool)
    sweeps_total = 0
    residual_max = 0.0
    converged = True

    def step(nodes: np.ndarray, e: np.ndarray, loc: np.ndarray, base_w: np.ndarray, base_l: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        ch = sys.child[e]
        own = np.where(same[e], p_win[ch], p_loss[ch])
        their = np.where(same[e], p_loss[ch], p_win[ch])
        m = len(nodes)
        w = base_w + np.bincount(loc, weights=prob[e] * own, minlength=m)
        l = base_l + np.bincount(loc, weights=prob[e] * their, minlength=m)
        return w, l

    current_tier = None
    for layer in schedule.layers:
        if current_tier is not None and layer.tier != current_tier and progress is not None:
            progress("policy", current_tier, sweeps_total, residual_max)
        current_tier = layer.tier
        if len(layer.flat):
            nodes = layer.flat
            e, loc = edges_of(sys, nodes, active)
            zero = np.zeros(len(nodes))
            p_win[nodes], p_loss[nodes] = step(nodes, e, loc, zero, zero)
        if len(layer.loop):
            nodes = layer.loop
            in_loop[nodes] = True
            e, loc = edges_of(sys, nodes, active)
            internal = in_loop[sys.child[e]]
            zero = np.zeros(len(nodes))
            base_w, base_l = step(nodes, e[~internal], loc[~internal], zero, zero)
            ei, li = e[internal], loc[internal]
            exits = loc[~internal]
            del e, loc, internal  # only the moves inside the set are used below
            exact = _solve_policy(
                nodes, ei, li, base_w, base_l, sys.child, prob, same, exits,
                sys.kind[nodes] == _DECISION,
            )
            del exits
            if exact is not None:
                p_win[nodes], p_loss[nodes] = exact
            sweeps = 0
            residual = np.inf
            while sweeps < max_sweeps:
                w, l = step(nodes, ei, li, base_w, base_l)
                residual = float(max(np.abs(w - p_win[nodes]).max(), np.abs(l - p_loss[nodes]).max()))
                p_win[nodes], p_loss[nodes] = w, l
                sweeps += 1
                if residual < tol:
                    break
            in_loop[nodes] = False
            sweeps_total += sweeps
            residual_max = max(residual_max, residual)
            converged &= residual < tol
    if current_tier is not None and progress is not None:
        progress("policy", current_tier, sweeps_total, residual_max)
    return sweeps_total, residual_max, converged


def _solve_policy(
    nodes: np.ndarray,
    e: np.ndarray,
    loc: np.ndarray,
    base_w: np.ndarray,
    base_l: np.ndarray,
    child: np.ndarray,
    prob: np.ndarray,
    same: np.ndarray,
    exits: np.ndarray,
    decision: np.ndarray,
) -> tuple[np.ndarray, np.ndarray] | None:
    """Exact win/loss probabilities on a cyclic set under fixed moves (``e``: internal edges).

    Unknowns ``[W; L]``; a move to the other player swaps them. Positions that never leave the
    set (no path to an exit) get 0 for both (endless play).
    """
    m = len(nodes)
    # the children's local indices in ``loc``'s type (int32 while ``2 m`` fits), and each array
    # per move let go as soon as the stacked ones are built: the same system, less memory
    j = np.searchsorted(nodes, child[e]).astype(loc.dtype, copy=False)
    keep = reaching(m, loc, j, exits)
    s = same[e]
    rows = np.concatenate([loc, loc + m])
    cols = np.concatenate([np.where(s, j, j + m), np.where(s, j + m, j)])
    del j, s
    p = prob[e]
    vals = np.concatenate([p, p])
    del p
    dec = np.concatenate([decision, decision])
    entries = [rows, cols, vals, np.concatenate([base_w, base_l])]
    del rows, cols, vals  # the solve lets them go
    x = linear_solve(2 * m, entries, np.concatenate([keep, keep]), dec)
    if x is None:
        return None
    return x[:m], x[m:]
