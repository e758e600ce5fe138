"""The choice among methods on a person's known labels, in one room: the candidates, their score, the rule.

* :mod:`.readouts`: how a fit gives every sample a class from the known labels (its clusters mapped, a nearest
  labelled neighbour or label spreading in its representation, a reference's own classes);
* :mod:`.rule`: the rule that starts from the prior's candidate and moves only on evidence;
* :mod:`.prior`: the prior of a person's file, from the shipped benchmark;
* :mod:`.estimator`: :class:`~.estimator.FamilyChoice`, the choice as a scikit-learn estimator;
* ``your_data``: ``python -m src.cluster``'s work (read the file, price and run the fits, write the folder).

The report's part is ``src/presentation/cluster_report.py``; the manual's is ``docs/cluster.md``. The benchmark's
two entrants that choose among every method per trial (:mod:`src.tuning.choice`) still choose by the held-out AC
of the settings file; they move to this rule once the fold fits' partitions ship.
"""
