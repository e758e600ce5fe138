"""How a candidate's fit gives every sample a class back from the known labels: its readouts.

A factorization gives a representation, not classes. Three readouts name the classes with the labels told to
the fit, and only those (a held-out fold's labels never), so that the classes of a held-out sample are made as
``labels.csv`` makes an unknown sample's:

* ``clusters``: the best of the protocol's KMeans runs on the representation, each cluster taking the class of
  its told samples (the best one-to-one map on them; a cluster left over takes its most frequent told class,
  :func:`src.protocol.partition.class_of_clusters`). The only readout of a method that clusters by itself
  (COP-KMeans);
* ``nearest_labelled``: the class of the nearest told sample in the representation (SDA's paper's own
  classifier; the registry's ``knn`` reference at its default, one neighbour);
* ``spread_labelled``: label spreading over the kNN graph of the representation (the registry's
  ``label_spreading`` reference at its default);

and a reference of the label tracks (:mod:`src.methods.references`) gives its own classes (``own``). The two
readouts by a classifier are the benchmark's (:data:`src.protocol.cell.LABEL_READOUTS`), so a candidate of the
choice and a cell of the benchmark read a representation alike.

Each readout also says how sure it is of each sample's class (:func:`classes`): a classifier's probability
of the class it gives (label spreading's distribution of labels, the neighbours' weighted vote), and for a
cluster the share of its told samples that carry its class. A told sample is given its own class with
confidence 1. One neighbour's vote is all or nothing, so a ``nearest_labelled`` or one-neighbour kNN confidence
is 1 for every sample: it says nothing, and the manual says so.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import methods
from ..methods.core.validation import UNLABELLED
from ..protocol.cell import LABEL_READOUTS, clusters_directly
from ..protocol.partition import class_of_clusters

#: The readouts of a representation, in the order a candidate's are listed.
OF_REPRESENTATION = ("clusters", *LABEL_READOUTS)
#: A reference's one readout: the classes it predicts.
OWN = "own"
#: How a readout is named after its method (``SDA + nearest labelled``); the clusters map is the method's name.
SUFFIX = {"clusters": "", "nearest_labelled": " + nearest labelled", "spread_labelled": " + label spreading",
          OWN: ""}


def readouts_of(name: str) -> tuple[str, ...]:
    """The readouts of the estimator ``name`` (registry name or import path): a reference's own classes, a
    method that clusters by itself its clusters mapped, a representation all three."""
    cls = methods.estimator_class(name)
    if getattr(cls, "reference", False):
        return (OWN,)
    if clusters_directly(cls):
        return ("clusters",)
    return OF_REPRESENTATION


def candidate_name(label: str, readout: str) -> str:
    """A candidate's name as the report and the prior write it: ``SDA + nearest labelled``, ``LabelSpreading``."""
    return f"{label}{SUFFIX[readout]}"


@dataclass
class Fitted:
    """What one fit leaves to read out: its clusters (n_samples,) where it clusters or was clustered, its
    representation (n_samples, r) where it has one (a reference's: the samples it classified), and for a
    reference its fitted estimator (its classes)."""

    clusters: np.ndarray | None = None
    representation: np.ndarray | None = None
    model: object = None


def classes(readout: str, fitted: Fitted, y_told: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The class of every sample (n_samples,; -1 where none can be given) and its confidence (n_samples,) by
    ``readout``, from the labels ``y_told`` (classes 0..c-1, -1 unknown) alone; ``k`` the rank the fit had."""
    known = y_told != UNLABELLED
    if readout == "clusters":
        clusters = np.asarray(fitted.clusters)
        mapped = class_of_clusters(clusters, y_told)
        given = mapped[clusters]
        found = np.zeros(mapped.size)
        for cluster in np.unique(clusters[known]):
            members = known & (clusters == cluster)
            found[cluster] = np.mean(y_told[members] == mapped[cluster])
        sure = found[clusters]
    elif readout == OWN:
        given, sure = np.asarray(fitted.model.labels_), probability(fitted.model, fitted.representation)
    else:
        model = methods.make(LABEL_READOUTS[readout], n_components=k)
        given = np.asarray(model.fit_predict(fitted.representation, y_told))
        sure = probability(model, fitted.representation)
    given = np.asarray(given, dtype=np.int64)
    sure = np.where(known, 1.0, np.where(given == UNLABELLED, 0.0, sure))
    return np.where(known, y_told, given), sure


def probability(model, X) -> np.ndarray:
    """A fitted reference's probability of the class it gives each sample of ``X`` (n_samples, n_features), the
    samples it was fitted on: label spreading's distribution of labels, else the classifier's
    ``predict_proba``."""
    classifier = model.classifier_
    if hasattr(classifier, "label_distributions_"):
        return np.asarray(classifier.label_distributions_).max(axis=1)
    return np.asarray(classifier.predict_proba(X)).max(axis=1)
