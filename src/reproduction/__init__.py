"""The papers: each paper's home, its readings, and the orchestration that reproduces and explains it.

:mod:`~src.reproduction.homes` (what a paper is: its sweeps, published numbers, dependencies, outputs) and
:mod:`~src.reproduction.readings` (its declared readings and their sweeps) are models that the presentation
room reads; :mod:`~src.reproduction.runner` runs the chosen papers' cells in one pool and has each paper's
figures and report written as soon as its cells are in, on top of running: the report writers are handed down
by the entry points (:mod:`src.reproduce`), and a paper's own figures are found by name
(:meth:`~src.reproduction.homes.Paper.module`): this room imports no module of presentation.
:mod:`~src.reproduction.rounds` (a tuned run's rounds), :mod:`~src.reproduction.contenders` (an outside method
opened) and :mod:`~src.reproduction.shipped` (the family's shipped cells) are what the benchmark's orchestration,
a floor above in :mod:`src.tuning` (:mod:`~src.tuning.benchmark`, :mod:`~src.tuning.outside`), builds on: no
module here imports the tuning room.
"""
