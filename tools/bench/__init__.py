"""Speed and scale benchmark of the targets of issue #13: ``python -m tools.bench`` (``make bench``).

Writes ``bench.md`` and ``bench.csv`` (and ``provenance.json``) into ``--out`` (default ``outputs/bench``).
Every target is measured in the one run, as a ratio where it is comparative:

1. ``make reproduce-all`` converged wall time (read from ``outputs/reproduce/all/wall_seconds.txt``);
2. nmf and nmf_kl per iteration against scikit-learn's MU, at one BLAS thread and at all cores;
3. ten batched starts against ten single-start fits, every iterating method;
4. every factorization on MNIST-70k (200 iterations) and the KMeans baseline (best of 20);
5. float32 against float64: speed, and AC/NMI against the noise of a second seed;
6. time to convergence under the reference rule, beside the per-iteration ratios.

Modules: :mod:`.facts` (what a method is, from its class and config), :mod:`.data` (the data sets),
:mod:`.measure` (timing a fit through the loop's ``Pass`` callback, scikit-learn per iteration, capped
child processes), :mod:`.jobs` (what a child runs), :mod:`.targets` (each target as data, pass/fail),
:mod:`.suite` (the measurements of a run), :mod:`.report` (bench.md, bench.csv), :mod:`.__main__` (CLI).
"""
