"""The engines: array functions over a graph (:mod:`.graph`) with no files, threads or tables:
enumeration, retrograde analysis, alpha-beta, value iteration (chance) and the secret-choice
engine (:mod:`.simultaneous`) on their shared core (:mod:`.stochastic`), matrix games and checks.
Deliberately empty: import the module you need."""
