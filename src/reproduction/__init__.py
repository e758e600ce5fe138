"""The papers: each paper's home, its readings, and the orchestration that reproduces and explains it.

:mod:`~src.reproduction.homes` (what a paper is: its sweeps, published numbers, dependencies, outputs) and
:mod:`~src.reproduction.readings` (its declared readings and their sweeps) are models that the presentation
room reads; :mod:`~src.reproduction.runner` runs the chosen papers' cells in one pool and writes each
paper's figures and report as soon as its cells are in, on top of both running and presentation.
"""
