"""Exact solvers for Looney Pyramids games: rules, engines and Parquet tables."""

__version__ = "0.1.0"
