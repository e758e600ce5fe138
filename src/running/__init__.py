"""Running cells: from a composed config to result rows on disk, one run or thousands.

:mod:`~src.running.settings` (the config as typed, checked once), :mod:`~src.running.cells` (the cell loop
of one run: open, compute, reuse, write), :mod:`~src.running.results` (the rows and ``results.csv``),
:mod:`~src.running.provenance` (what produced a result), :mod:`~src.running.progress` (the lines a person
follows), :mod:`~src.running.cell_warnings` (what a method warned while a cell ran, kept with its row),
:mod:`~src.running.command_line` (the checks before Hydra starts), :mod:`~src.running.sweep`
(Hydra multiruns), :mod:`~src.running.slurm` (the SLURM launcher) and :mod:`~src.running.pool` (many runs'
cells in one pool of workers). This room imports the numerical rooms (methods, data, protocol) and the base
modules, and nothing above it (see tests/test_imports.py): a run's table and figure are written by the report
writer the entry points hand down (:func:`src.running.cells.end_run`).
"""
