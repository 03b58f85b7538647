"""Analysis of solved tables: metrics, plots, balance reports and rules-tuning sweeps.

Everything here reads the Parquet tables written by :mod:`solver` (through
:class:`solver.api.Solution`); it solves a variant only when its table is missing.

* :mod:`analysis.metrics` -- numbers computed from the tables (polars / numpy / scipy).
* :mod:`analysis.plots` -- plot helpers that draw on a given matplotlib ``ax``.
* :mod:`analysis.report` -- :func:`~analysis.report.write_report`, the balance report.
* :mod:`analysis.tuning` -- :func:`~analysis.tuning.run_sweep`, the rules-tuning comparison.
* :mod:`analysis.boards` -- :func:`~analysis.boards.svg`, a position (``game.picture(state)``) as
  an SVG picture, for the reports, ``pyramids show --svg`` and the explorer (reads no table).
"""

from __future__ import annotations

__all__ = ["boards", "metrics", "plots", "report", "tuning"]

#: positions up to which random play is computed exactly (larger: simulation); here, not in
#: :mod:`analysis.metrics`, so that the command's options can name it without importing scipy
EXACT_LIMIT = 2_000_000
