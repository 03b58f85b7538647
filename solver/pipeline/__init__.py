"""The one place that solves (``../shared/DESIGN.md``): routing a variant to the whole graph, tiers
or a setup sweep (:mod:`.whole`), tier discovery and the tier workers (:mod:`.tiered`,
:mod:`.tiered_chance`, what they share in :mod:`.tierwork`), the memory plan (:mod:`.memory`),
work folders (:mod:`.workfiles`), the setups table (:mod:`.setups`) and the task layer on Dask
(:mod:`.tasks`). It imports the engines, the games and the tables; nothing below it imports it.
Deliberately empty: import the module you need."""
