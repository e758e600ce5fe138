"""The choice among methods on a person's known labels, in one room: the candidates, their score, the rule.

* :mod:`.readouts`: how a fit gives every sample a class from the known labels (its clusters mapped, a nearest
  labelled neighbour or label spreading in its representation, a reference's own classes);
* :mod:`.rule`: the rule that starts from the prior's candidate and moves only on evidence;
* :mod:`.prior`: the prior of a person's file, from the shipped benchmark;
* :mod:`.estimator`: :class:`~.estimator.FamilyChoice`, the choice as a scikit-learn estimator;
* ``your_data``: ``python -m src.cluster``'s work (read the file, price and run the fits, write the folder);
* :mod:`.fold_fits`: the benchmark's fold fits with their partitions and readouts, a piece a data set
  (``python -m src.benchmark --fold-fits``);
* :mod:`.entrants`: the benchmark's choice entrants by this rule, from the shipped fold fits.

The report's part is ``src/presentation/cluster_report.py``; the manual's is ``docs/cluster.md``. The benchmark's
report still ranks the entrants that choose by the held-out AC (:mod:`src.tuning.choice`): the fold fits ship
for some data sets only (``papers/benchmark/fold_fits/``), and the report moves to :mod:`.entrants` once every
data set's piece ships. ``python -m tools.choice_entrants`` measures them on the pieces that ship.
"""
