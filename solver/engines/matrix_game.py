"""Zero-sum matrix games: the value and both players' optimal mixed strategies.

The row player picks a mixed strategy ``x`` over the rows, the column player ``y`` over the
columns, and the row player receives ``x^T A y`` (the column player pays it). By von Neumann's
minimax theorem ``max_x min_y x^T A y = min_y max_x x^T A y``: the **value** of the game.

* :func:`solve_matrix_game` solves one game by linear programming (HiGHS through
  :func:`scipy.optimize.linprog`).
* :func:`solve_matrix_games` solves many games of one shape at once (what the simultaneous-move
  engine needs: one small game per simultaneous node per sweep). Games with a **saddle point**
  (``max_i min_j A_ij == min_j max_i A_ij``) are answered without an LP, ``2 x 2`` games without
  one by the closed formula, and the rest by **one** HiGHS call per chunk on a block-diagonal
  LP, instead of paying ``linprog``'s set-up per game.
* :func:`solve_matrix_games_by_shape` takes games of different shapes and groups them.

The LP (the standard formulation with a value variable ``v``): maximise ``v`` subject to
``(A^T x)_j >= v`` for every column ``j``, ``sum(x) = 1``, ``x >= 0``. The column player's
strategy is the dual of the column constraints (their marginals): HiGHS returns a basic,
exactly complementary dual, which is checked (it must hold the row player to what the row
strategy guarantees); if the check fails the column player's own LP is solved instead. The
value returned is computed from the two strategies (the midpoint of what the row strategy
guarantees and what the column strategy concedes, which agree to ~1e-14), not read from the
LP's value variable.

Speed (measured on 20,000 random 6 x 6 games with normal entries, 2 shared CPUs): batched,
~8,600 LPs/s (500 games per HiGHS call, 40 calls); one ``linprog`` call per game, ~235/s
through :func:`solve_matrix_game` and ~450/s for a bare dense ``linprog``. Saddle points and
2 x 2 games cost no LP (~1.5 million 2 x 2 games/s).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from scipy.sparse import coo_matrix

#: games per HiGHS call in :func:`solve_matrix_games`. Measured on 6 x 6 games: ~500 per call
#: is fastest (HiGHS's time per game grows with the size of the block LP beyond that; fewer
#: games per call pay the set-up more often)
CHUNK = 500
#: HiGHS options: presolve only costs time on a block of tiny dense LPs (about 2x measured);
#: the tightest feasibility tolerances (default 1e-7) make both strategies guarantee the value
#: to ~1e-14 (measured; with the defaults the dual was off by up to ~1e-8) for ~10% more time,
#: and let differences of 1e-7 between entries count (the engine's tie-breaks rely on it)
_HIGHS_OPTIONS = {"presolve": False, "primal_feasibility_tolerance": 1e-10,
                  "dual_feasibility_tolerance": 1e-10}
_PRESOLVED_OPTIONS = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}
#: games whose strategies prove the value only within this (relative) are refined (_refine)
_POLISH_GAP = 1e-9
#: games per LP when _refine first re-solves the games proven only in a wide interval together
#: (with presolve; blocks of 12 measured: all but 3 of 526 proven; one block of 526 failed)
_REFINE_BLOCK = 12
#: a dual taken as the column strategy must hold the row player to what the row strategy
#: guarantees within this (relative to the value's size), else the column LP is solved
_DUAL_CHECK = 1e-9


@dataclass(frozen=True)
class MatrixGameSolution:
    """The solution of one zero-sum matrix game ``A`` (the row player maximises ``x^T A y``).

    * ``value``: the value of the game for the row player.
    * ``row``: ``float64[m]`` an optimal mixed strategy of the row player (sums to 1).
    * ``col``: ``float64[n]`` an optimal mixed strategy of the column player (sums to 1).
    """

    value: float
    row: np.ndarray
    col: np.ndarray


@dataclass(frozen=True)
class MatrixGameBatch:
    """Solutions of ``k`` games of one shape ``m x n`` (see :func:`solve_matrix_games`).

    * ``value``: ``float64[k]``; ``row``: ``float64[k, m]``; ``col``: ``float64[k, n]``.
    * ``saddle``: ``bool[k]`` games answered by a saddle point (pure strategies).
    * ``lp_solves``: games that needed linear programming; ``lp_calls``: HiGHS calls made;
      ``lp_seconds``: time spent in them.
    """

    value: np.ndarray
    row: np.ndarray
    col: np.ndarray
    saddle: np.ndarray
    lp_solves: int = 0
    lp_calls: int = 0
    lp_seconds: float = 0.0

    def __len__(self) -> int:
        return len(self.value)

    def __getitem__(self, i: int) -> MatrixGameSolution:
        return MatrixGameSolution(float(self.value[i]), self.row[i].copy(), self.col[i].copy())


def _check(payoff: np.ndarray, ndim: int) -> np.ndarray:
    a = np.asarray(payoff, dtype=np.float64)
    what = "a payoff matrix" if ndim == 2 else "a stack of payoff matrices (k x m x n)"
    if a.ndim != ndim:
        raise ValueError(f"expected {what}, got an array of shape {a.shape}")
    if any(s == 0 for s in a.shape[-2:]):
        raise ValueError(f"a matrix game needs at least one row and one column, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError("payoffs must be finite numbers (found NaN or infinity)")
    return a


def _clean(p: np.ndarray) -> np.ndarray:
    """Clip the tiny negatives an LP leaves and make each strategy (last axis) sum to 1."""
    p = np.where(p > 0, p, 0.0)
    s = p.sum(axis=-1, keepdims=True)
    uniform = np.full_like(p, 1.0 / p.shape[-1])
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(s > 0, p / np.where(s > 0, s, 1.0), uniform)


def solve_matrix_game(payoff: np.ndarray) -> MatrixGameSolution:
    """Solve the zero-sum matrix game ``payoff`` (the row player maximises).

    Parameters
    ----------
    payoff : array_like
        ``m x n`` finite payoffs to the row player.

    Returns
    -------
    MatrixGameSolution
        The value and an optimal mixed strategy of each player.

    Raises
    ------
    ValueError
        When ``payoff`` is not a non-empty 2-D array of finite numbers.
    """
    a = _check(payoff, 2)
    batch = _solve_lp(a[None], want_col=True)
    return batch[0]


#: probabilities of optimal strategies closer than this are the same (ranges narrower than it are
#: single points); far above the LP's and the optimality slack's rounding
SAME_PROBABILITY = 1e-6


@dataclass(frozen=True)
class StrategyRanges:
    """What **every** optimal strategy of a zero-sum matrix game does (see
    :func:`optimal_strategy_ranges`): for each action, the smallest and largest probability it
    has over all optimal mixed strategies of its player. An optimal strategy need not be unique;
    a single LP solution is one point of a polytope, and these ranges describe the whole of it.

    * ``value``: the value of the game for the row player.
    * ``row_lo``, ``row_hi``: ``float64[m]``; ``col_lo``, ``col_hi``: ``float64[n]``.
    * ``tol``: the slack within which a strategy counts as optimal (it guarantees the value to
      within ``tol``), so probabilities below it are reported as 0. The slack widens a range by
      about ``tol`` over the payoff gaps, so :attr:`unique` and the ``*_always`` masks compare
      probabilities to :data:`SAME_PROBABILITY` instead.
    """

    value: float
    row_lo: np.ndarray
    row_hi: np.ndarray
    col_lo: np.ndarray
    col_hi: np.ndarray
    tol: float

    @property
    def row_always(self) -> np.ndarray:
        """``bool[m]``: the rows every optimal strategy plays (with a probability above
        :data:`SAME_PROBABILITY`)."""
        return self.row_lo > SAME_PROBABILITY

    @property
    def col_always(self) -> np.ndarray:
        return self.col_lo > SAME_PROBABILITY

    @property
    def unique(self) -> bool:
        """Whether both players have one optimal strategy (every range a single point)."""
        return bool(np.all(self.row_hi - self.row_lo <= SAME_PROBABILITY)
                    and np.all(self.col_hi - self.col_lo <= SAME_PROBABILITY))


def _extremes(a_ub: np.ndarray, b_ub: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The least and greatest ``z_i`` over ``{z >= 0, sum(z) = 1, a_ub z <= b_ub}``, each by one
    LP (HiGHS), for every ``i < k``."""
    from scipy.optimize import linprog  # (here: scipy.optimize takes most of a second to import)

    lo, hi = np.empty(k), np.empty(k)
    eq = np.ones((1, k))
    for i in range(k):
        for sign, out in ((1.0, lo), (-1.0, hi)):
            c = np.zeros(k)
            c[i] = sign
            res = linprog(c, A_ub=a_ub, b_ub=b_ub, A_eq=eq, b_eq=[1.0], bounds=(0, 1), method="highs")
            if res.status != 0:  # the optimal set is never empty: only numerical trouble gets here
                raise RuntimeError(f"the optimal-strategy LP failed: {res.message}")
            out[i] = sign * res.fun
    return lo, hi


def optimal_strategy_ranges(payoff: np.ndarray, *, tol: float | None = None) -> StrategyRanges:
    """For each action of each player, the smallest and largest probability it has over **all**
    optimal mixed strategies of the zero-sum game ``payoff`` (the row player maximises).

    The row player's optimal strategies are ``{x >= 0, sum(x) = 1, (A^T x)_j >= v - tol for every
    column j}`` (``v`` the value), the column player's ``{y >= 0, sum(y) = 1, (A y)_i <= v + tol}``;
    each bound is one LP over that set, ``2 (m + n)`` LPs in all. ``tol`` (default ``1e-9`` times
    the largest payoff's size, at least ``1e-9``) absorbs the rounding of payoffs that come from
    an iterative solve, so a range may include strategies that lose at most ``tol``.

    Raises
    ------
    ValueError
        When ``payoff`` is not a non-empty 2-D array of finite numbers.
    """
    a = _check(payoff, 2)
    if tol is None:
        tol = 1e-9 * max(1.0, float(np.abs(a).max()))
    v = solve_matrix_game(a).value
    m, n = a.shape
    row_lo, row_hi = _extremes(-a.T, np.full(n, -(v - tol)), m)
    col_lo, col_hi = _extremes(a, np.full(m, v + tol), n)
    snap = (lambda z: np.where(z <= tol, 0.0, np.minimum(z, 1.0)))
    return StrategyRanges(float(v), snap(row_lo), snap(row_hi), snap(col_lo), snap(col_hi), float(tol))


def solve_matrix_games(payoffs: np.ndarray, *, chunk: int = CHUNK) -> MatrixGameBatch:
    """Solve ``k`` zero-sum matrix games of one shape at once.

    Parameters
    ----------
    payoffs : array_like
        ``k x m x n`` payoffs to the row player of each game.
    chunk : int
        Games per HiGHS call for those that need an LP.

    Returns
    -------
    MatrixGameBatch
        Values and strategies; equal to :func:`solve_matrix_game` game by game (the LP may
        pick another optimal strategy where a game has several; the value is the same).
    """
    a = _check(payoffs, 3)
    if chunk < 1:
        raise ValueError("chunk must be at least 1")
    k, m, n = a.shape
    value = np.zeros(k)
    row = np.zeros((k, m))
    col = np.zeros((k, n))
    # 1. saddle points: max of the row minima == min of the column maxima
    row_min = a.min(axis=2)
    col_max = a.max(axis=1)
    i_star = row_min.argmax(axis=1)
    j_star = col_max.argmin(axis=1)
    lower = row_min[np.arange(k), i_star]
    upper = col_max[np.arange(k), j_star]
    saddle = lower >= upper  # lower <= upper always; equal at a saddle point
    s = np.flatnonzero(saddle)
    value[s] = lower[s]
    row[s, i_star[s]] = 1.0
    col[s, j_star[s]] = 1.0
    rest = np.flatnonzero(~saddle)
    # 2. 2 x 2 games without a saddle point: both strategies fully mixed, closed formula
    if m == 2 and n == 2 and len(rest):
        g = a[rest]
        p, q, r, t = g[:, 0, 0], g[:, 0, 1], g[:, 1, 0], g[:, 1, 1]
        d = p + t - q - r  # nonzero without a saddle point
        x0 = (t - r) / d
        y0 = (t - q) / d
        value[rest] = (p * t - q * r) / d
        row[rest] = _clean(np.stack([x0, 1 - x0], axis=1))
        col[rest] = _clean(np.stack([y0, 1 - y0], axis=1))
        return MatrixGameBatch(value, row, col, saddle)
    # 3. the rest: block-diagonal LPs, a chunk at a time
    solves = calls = 0
    seconds = 0.0
    for start in range(0, len(rest), chunk):
        idx = rest[start : start + chunk]
        part = _solve_lp(a[idx], want_col=True)
        value[idx], row[idx], col[idx] = part.value, part.row, part.col
        solves += part.lp_solves
        calls += part.lp_calls
        seconds += part.lp_seconds
    return MatrixGameBatch(value, row, col, saddle, solves, calls, seconds)


def solve_matrix_games_by_shape(payoffs: Sequence[np.ndarray], *, chunk: int = CHUNK) -> list[MatrixGameSolution]:
    """Solve games of different shapes: grouped by shape, each group by :func:`solve_matrix_games`.

    Returns one :class:`MatrixGameSolution` per game, in the order given.
    """
    mats = [_check(p, 2) for p in payoffs]
    out: list[MatrixGameSolution | None] = [None] * len(mats)
    groups: dict[tuple[int, int], list[int]] = {}
    for i, a in enumerate(mats):
        groups.setdefault(a.shape, []).append(i)
    for members in groups.values():
        batch = solve_matrix_games(np.stack([mats[i] for i in members]), chunk=chunk)
        for j, i in enumerate(members):
            out[i] = batch[j]
    return [s for s in out if s is not None]


def _block_lp(a: np.ndarray, transpose: bool, options: tuple[dict, ...] | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One LP for ``k`` games: per game, maximise ``v`` s.t. ``(A^T x)_j >= v``, ``sum x = 1``.

    With ``transpose`` the column player's LP (minimise ``w`` s.t. ``(A y)_i <= w``) is written
    as the row player's LP of ``-A^T``. Returns ``(values, strategies, dual of the columns)``.
    """
    from scipy.optimize import linprog  # (here: scipy.optimize takes most of a second to import)

    if transpose:
        a = -np.transpose(a, (0, 2, 1))
    # each game's entries mapped onto [0, 1] (same strategies; HiGHS is more robust when the
    # coefficients are of one size: a 1e-6 next to a 6 once made it report "infeasible")
    low = a.min(axis=(1, 2), keepdims=True)
    spread = a.max(axis=(1, 2), keepdims=True) - low
    a = (a - low) / np.where(spread > 0, spread, 1.0)
    k, m, n = a.shape
    nv = m + 1  # variables per game: x_0..x_{m-1}, v
    # inequality rows (game g, column j): -sum_i A[g,i,j] x_i + v <= 0
    g_idx, i_idx, j_idx = np.meshgrid(np.arange(k), np.arange(m), np.arange(n), indexing="ij")
    rows_x = (g_idx * n + j_idx).ravel()
    cols_x = (g_idx * nv + i_idx).ravel()
    vals_x = -a.ravel()
    rows_v = np.arange(k * n)
    cols_v = np.repeat(np.arange(k) * nv + m, n)
    a_ub = coo_matrix(
        (np.concatenate([vals_x, np.ones(k * n)]), (np.concatenate([rows_x, rows_v]), np.concatenate([cols_x, cols_v]))),
        shape=(k * n, k * nv),
    ).tocsr()
    a_eq = coo_matrix(
        (np.ones(k * m), (np.repeat(np.arange(k), m), (np.arange(k)[:, None] * nv + np.arange(m)).ravel())),
        shape=(k, k * nv),
    ).tocsr()
    c = np.zeros(k * nv)
    c[np.arange(k) * nv + m] = -1.0  # maximise the sum of the values (separable per game)
    lo = np.zeros(k * nv)
    hi = np.full(k * nv, np.inf)
    lo[np.arange(k) * nv + m] = a.min(axis=(1, 2))
    hi[np.arange(k) * nv + m] = a.max(axis=(1, 2))
    for opts in options or (_HIGHS_OPTIONS, {}):  # HiGHS's defaults if the fast settings fail
        res = linprog(c, A_ub=a_ub, b_ub=np.zeros(k * n), A_eq=a_eq, b_eq=np.ones(k),
                      bounds=np.stack([lo, hi], axis=1), method="highs", options=opts)
        if res.status == 0:
            break
    if res.status != 0:
        raise RuntimeError(f"the matrix-game LP failed: {res.message}")
    sol = res.x.reshape(k, nv)
    dual = -np.asarray(res.ineqlin.marginals).reshape(k, n)
    values = low.ravel() + np.where(spread > 0, spread, 1.0).ravel() * sol[:, m]
    if transpose:
        values = -values
    return values, sol[:, :m], dual


def _refine(a: np.ndarray, x: np.ndarray, y: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> int:
    """Re-solve, one LP per game, the games whose strategies prove the value only in a wide
    interval ``[lo, hi]``.

    In a large block HiGHS's tight settings can fail on near-degenerate games (entries near the
    value differing by ~1e-7 next to large ones); the fallback's default tolerances then leave
    strategies ~1e-6 off. Alone, such a game solves precisely. New strategies are kept only
    where they prove a tighter bound **on the game**, so this can only help. Rare on ordinary
    games (none in 10,000 random 6 x 6). Updates in place; returns LP calls.
    """
    def wide(idx: np.ndarray) -> np.ndarray:
        return idx[hi[idx] - lo[idx] > _POLISH_GAP * np.maximum(1.0, np.abs(lo[idx]))]

    calls = 0
    # first a few such games at a time, with presolve (measured on Petal Battle 4-3-1's 526:
    # all but 3 proven in 0.6 s, against 3.0 s one LP per game: most of a sweep's LP time)
    bad = wide(np.arange(len(lo)))
    for start in range(0, len(bad), _REFINE_BLOCK):
        idx = bad[start : start + _REFINE_BLOCK]
        for transpose in (False, True):
            try:
                _, s1, s2 = _block_lp(a[idx], transpose=transpose, options=(_PRESOLVED_OPTIONS,))
            except RuntimeError:
                continue
            calls += 1
            nx, ny = (_clean(s2), _clean(s1)) if transpose else (_clean(s1), _clean(s2))
            _keep_tighter(a[idx], idx, nx, ny, x, y, lo, hi)
    for g in wide(bad).tolist():
        attempts = [(t, o) for o in ((_HIGHS_OPTIONS,), (_PRESOLVED_OPTIONS,), ({},)) for t in (False, True)]
        for transpose, options in attempts:
            try:
                _, s1, s2 = _block_lp(a[g : g + 1], transpose=transpose, options=options)
            except RuntimeError:
                continue
            calls += 1
            nx, ny = (_clean(s2), _clean(s1)) if transpose else (_clean(s1), _clean(s2))
            _keep_tighter(a[g : g + 1], np.array([g]), nx, ny, x, y, lo, hi)
            if hi[g] - lo[g] <= _POLISH_GAP * max(1.0, abs(lo[g])):
                break
    return calls


def _keep_tighter(a: np.ndarray, idx: np.ndarray, nx: np.ndarray, ny: np.ndarray, x: np.ndarray,
                  y: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> None:
    """Games ``idx`` (payoffs ``a``): take the new strategies ``nx``/``ny`` where they prove a
    tighter bound than ``lo``/``hi`` (in place)."""
    nlo = np.einsum("km,kmn->kn", nx, a).min(axis=1)
    nhi = np.einsum("kmn,kn->km", a, ny).max(axis=1)
    up = nlo > lo[idx]
    x[idx[up]], lo[idx[up]] = nx[up], nlo[up]
    down = nhi < hi[idx]
    y[idx[down]], hi[idx[down]] = ny[down], nhi[down]


def _solve_lp(a: np.ndarray, *, want_col: bool) -> MatrixGameBatch:
    """Games ``a`` (``k x m x n``) by one block-diagonal LP (a second one where duals fail)."""
    k, m, n = a.shape
    t0 = time.perf_counter()
    _, x, y = _block_lp(a, transpose=False)
    calls = 1
    x, y = _clean(x), _clean(y)
    # the value from the strategies, not from the LP's v (HiGHS can leave v off by ~1e-9 when
    # entries differ in scale): what x guarantees and what y concedes, equal at an optimum
    lo = np.einsum("km,kmn->kn", x, a).min(axis=1)
    hi = np.einsum("kmn,kn->km", a, y).max(axis=1)
    bad = np.flatnonzero(hi - lo > _DUAL_CHECK * np.maximum(1.0, np.abs(lo)))
    if len(bad) and want_col:  # the dual is no good: the column player's own LP
        _, y_bad, _ = _block_lp(a[bad], transpose=True)
        y[bad] = _clean(y_bad)
        hi[bad] = np.einsum("kmn,kn->km", a[bad], y[bad]).max(axis=1)
        calls += 1
    calls += _refine(a, x, y, lo, hi)
    value = np.clip(0.5 * (lo + hi), lo, hi) if len(lo) else lo
    seconds = time.perf_counter() - t0
    return MatrixGameBatch(value, x, y, np.zeros(k, dtype=bool), k, calls, seconds)
