"""The choice among methods on a person's known labels, in one room: the candidates, their score, the rule.

* :mod:`.readouts`: how a fit gives every sample a class from the known labels (its clusters mapped, a nearest
  labelled neighbour or label spreading in its representation, a reference's own classes);
* :mod:`.rule`: the rule that starts from the prior's candidate and moves only on evidence;
* :mod:`.prior`: the prior of a person's file, from the shipped benchmark;
* :mod:`.learning_curve`: the estimate read off the line through two label counts, at every known label;
* :mod:`.estimator`: :class:`~.estimator.FamilyChoice`, the choice as a scikit-learn estimator;
* ``your_data``: ``python -m src.cluster``'s work (read the file, price and run the fits, write the folder);
* :mod:`.fold_fits`: the benchmark's fold fits with their partitions and readouts, a piece a data set
  (``python -m src.benchmark --fold-fits``);
* :mod:`.entrants`: the benchmark's choice entrants by this rule, from the shipped fold fits.

The report's parts are ``src/presentation/cluster_report.py`` (a person's file) and
``src/presentation/choice_report.py`` (the benchmark's entrants, ``papers/benchmark/choice_entrants.csv.gz``,
ranked with the family); the manual's are ``docs/cluster.md`` and ``docs/benchmark.md``.
``python -m tools.choice_entrants`` sets the entrants beside every single candidate.
"""
