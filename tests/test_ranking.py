"""The ranking hook (issue 34): a bijection between each tier's positions and 0..size-1.

Proven against independent enumerations: every board of a few small shapes listed by
itertools, in lexicographic order; every rank of small tiers unranked into a valid position of
that tier; the reachable positions of Override 3x3 and Blam! 3x3. A mutated ranking (two
positions swapped) is caught by the check, by `pyramids check`'s rules and by `solve`."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from solver.core.ranking import BoardRanking, check_ranking, multinomial, refuse_broken_ranking, sample_keys
from solver.core.selfcheck import check_game
from solver.errors import ProtocolError
from solver.games import make_game
from solver.games.override import Override


def _boards(n: int, k: int, vectors: list[tuple[int, ...]]) -> np.ndarray:
    """Every board with one of ``vectors`` as its counts: blocks in the vectors' order, each
    in lexicographic order (the order the ranks must follow)."""
    rows = []
    for v in vectors:
        rows += [b for b in itertools.product(range(k), repeat=n)
                 if tuple(b.count(s) for s in range(1, k)) == v]
    return np.array(rows, dtype=np.int64)


@pytest.mark.parametrize("n,k,vectors", [
    (4, 3, [(1, 1)]),
    (5, 3, [(2, 2)]),
    (6, 4, [(1, 2, 0)]),
    (4, 3, [(a, b) for a in range(3) for b in range(3)]),
    (5, 4, [(2, 0, 1), (0, 0, 0), (1, 1, 1), (0, 3, 2)]),
])
def test_board_ranks_follow_the_lexicographic_order_of_every_board(n, k, vectors) -> None:
    ranking = BoardRanking(n, k, vectors)
    boards = _boards(n, k, vectors)
    assert ranking.size == len(boards) == sum(multinomial(n, v) for v in vectors)
    assert np.array_equal(ranking.rank(boards), np.arange(len(boards)))
    assert np.array_equal(ranking.unrank(np.arange(len(boards))), boards)


def test_a_board_with_other_counts_has_no_rank_and_bad_input_is_refused() -> None:
    ranking = BoardRanking(4, 3, [(1, 1)])
    assert ranking.rank(np.array([[1, 1, 0, 2]])).tolist() == [-1]
    with pytest.raises(ValueError, match="symbols must lie in 0..2"):
        ranking.rank(np.array([[3, 0, 0, 0]]))
    with pytest.raises(ValueError, match="ranks must lie in 0..11"):
        ranking.unrank(np.array([12]))
    with pytest.raises(ValueError, match="more symbols than the 2 cells"):
        BoardRanking(2, 3, [(2, 1)])


def _every_rank_is_a_position(game, tiers: list[int]) -> None:
    """Every rank of each tier unranks to a key that decodes to a valid position of that tier
    and ranks back to itself; no two ranks share a key."""
    for t in tiers:
        size = game.tier_size(t)
        keys = game.unrank(t, np.arange(size))
        assert len(np.unique(keys)) == size
        assert np.all(game.tier_of(keys) == t)
        assert np.array_equal(game.rank(t, keys), np.arange(size))
        for key in keys[:: max(1, size // 50)].tolist():
            assert game.encode(game.decode(key)) == key


def test_override_tiers_rank_every_position_of_small_tiers() -> None:
    game = make_game("override", {"size": 3, "line": 3, "per_size": 1})
    tiers = sorted(set(game.tier_of(sample_keys(game, breadth=500)).tolist()))[:12]
    _every_rank_is_a_position(game, tiers)
    game2 = make_game("override", {"size": 3, "line": 3, "per_size": 2})
    _every_rank_is_a_position(game2, sorted(set(game2.tier_of(sample_keys(game2, breadth=200)).tolist()))[:6])


def test_blam_tiers_rank_every_position_of_small_tiers() -> None:
    game = make_game("blam", {"rows": 3, "cols": 3, "per_size": 1})
    tiers = sorted(set(game.tier_of(sample_keys(game, breadth=500)).tolist()))
    _every_rank_is_a_position(game, [t for t in tiers if game.tier_size(t) <= 200_000][:8])


@pytest.mark.parametrize("name,params", [
    ("override", {"size": 3, "line": 3, "per_size": 1}),
    ("blam", {"rows": 3, "cols": 3, "per_size": 1}),
    ("blam", {"rows": 4, "cols": 4, "per_size": 2}),
    ("blam", {"rows": 3, "cols": 3, "per_size": 1, "players": 3}),
])
def test_the_reachable_positions_rank_without_a_problem(name, params) -> None:
    game = make_game(name, params)
    keys = sample_keys(game, breadth=20_000, games=50)
    assert len(keys) > 2_000
    assert check_ranking(game, keys) == []


def test_blam_ranks_only_its_piece_key_scheme() -> None:
    crowded = make_game("blam", {"rows": 3, "cols": 3, "per_size": 2})
    assert crowded.key_scheme == "square" and not crowded.ranked()
    with pytest.raises(ValueError, match="only the 'piece' scheme"):
        crowded.tier_size(0)
    refuse_broken_ranking(crowded)  # (nothing to check: not ranked)


class _Swapped(Override):
    """Override whose rank swaps the start's rank with the next one (unrank left alone)."""

    def rank(self, tier, keys):
        r = super().rank(tier, keys)
        start = self.encode(self.canonical(self.initial_state()))
        if int(self.tier_of(np.array([start], np.uint64))[0]) == int(tier):
            a = int(super().rank(tier, np.array([start], np.uint64))[0])
            r = np.where(r == a, a + 1, np.where(r == a + 1, a, r))
        return r


def _swapped():
    return _Swapped.from_params({"size": 3, "line": 3, "per_size": 1})


def test_a_mutated_ranking_is_caught_by_the_check_and_by_solve(tmp_path) -> None:
    game = _swapped()
    problems = check_ranking(game, sample_keys(game, breadth=100))
    assert problems and "unrank(rank(key))" in problems[0][0]
    res = check_game(game, playouts=2, positions=300)
    assert not res.ok and any(p.rule == "ranking" for p in res.problems)
    from solver.api import solve

    with pytest.raises(ProtocolError, match=r"ranking hook is broken: .* at key \d+") as exc:
        solve(game, out=tmp_path, tiered=True)
    assert "\n" not in str(exc.value) and "pyramids check override" in str(exc.value)
    assert not any(tmp_path.rglob("*.parquet"))  # (refused before any work)


def test_pyramids_check_reports_the_ranking(capsys) -> None:
    from solver.cli import main

    assert main(["check", "blam", "--preset", "3x3", "--positions", "500", "--playouts", "3"]) == 0
    assert "the ranking of their tiers is a bijection on" in capsys.readouterr().out


def test_bench_ranking_prints_a_row_per_case(capsys) -> None:
    """The benchmark of ranked storage: positions, rank space and the bytes a position of the
    three layouts, from a table it solves; the rank space is the sum of the tiers' sizes."""
    from solver import bench_ranking

    assert bench_ranking.main(["--case", "blam:3x3"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:4] == ["case", "positions", "rank", "space"]
    row = out[1].split()
    assert row[0] == "blam:3x3" and float(row[3]) >= 1.0 and all(float(x.replace(",", "")) > 0 for x in row[4:])
