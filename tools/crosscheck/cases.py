"""The cases of the cross-check: their inputs (real data, seeded initial factors), our side, the comparison.

Every case is rebuilt from a small description (:class:`Case`: data subset, seed, options), so that the
golden fixtures need to hold only the reference code's outputs. One function builds the inputs for both
sides (:func:`build_inputs`), one runs ours (:func:`run_ours`), one compares ours with the reference
outputs (:func:`compare`); ``python -m tools.crosscheck`` gets the reference outputs from GNU Octave,
``tests/tools/test_crosscheck.py`` from the fixtures.

Conventions of the comparison, after Deng Cai's code:

* GNMF, GNMF_KL and LCCF return their factors after a final ``NormalizeUV`` (U's columns to unit L2 norm,
  or for LCCF to u^T K u = 1 with K = X^T X; V scaled inversely). Ours are normalized the same way before
  comparing, and the initial factors are handed to both sides already normalized, so the reference code's
  own normalization at the start is (up to rounding) the identity. Every rule compared here is equivariant
  under that rescaling, up to the 1e-10 floor of the denominators.
* A difference is ``max |ours - reference| / max |reference|`` over the entries of a factor (the largest
  over the factors of a case), over an objective history, or over a graph; iteration counts and the chosen
  start must be equal.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
import yaml

from src import methods
from src.config_dir import CONF_DIR
from src.data import load_dataset
from src.methods.graph.knn import knn_graph, label_graph
from src.protocol.metrics import accuracy, nmi

CONF_DATASETS = CONF_DIR / "dataset"

TOL_FACTORS = 1e-10
"""Largest relative difference accepted between Octave's factors (or objectives) and ours."""
TOL_EXACT = 1e-12
"""Largest difference accepted for the graphs and the metrics, which involve no iteration."""
TOL_OBJECTIVE = 1e-8
"""Largest relative difference accepted between objective histories. Looser than the factors': ours evaluates
||X - U V^T||^2 as ||X||^2 - 2 tr(U^T X V) + tr(U^T U V^T V) and the graph term as tr(V^T D V) - tr(V^T W V),
Cai's code forms X - U V^T and (V^T L) .* V^T; both cancel large terms (alpha tr(V^T D V) is about 1e5 times the
objective in the GNMF cases), so rounding alone moves the objective by up to ~1e-10 of its value while the
factors agree to ~1e-15."""


@dataclass(frozen=True)
class Subset:
    """Some classes of a data set of ``conf/dataset``, all their samples, in the file's order."""

    dataset: str
    classes: tuple[int, ...]
    preprocess: str | None = None  # None: the config's own
    labelled_per_class: int = 2  # the first samples of each class are labelled (semi-supervised cases)


@dataclass(frozen=True)
class Case:
    """One comparison: a reference function on a subset, and our method from the same inputs.

    kind: "factorization" (fixed iterations or the stopping rule from one start), "multistart",
    "graph" or "metrics".
    """

    name: str
    kind: str
    subset: Subset
    method: str | None = None  # ours (methods.make name)
    reference: str | None = None  # "gnmf", "gnmf_kl", "lccf"
    params: dict = field(default_factory=dict)  # our estimator's extra parameters
    options: dict = field(default_factory=dict)  # the reference function's options struct
    graph: dict | None = None  # constructW options (and ours) when a graph is used
    seed: int = 0
    n_starts: int = 1
    stopping: str = "fixed"  # or "reference"
    max_iter: int = 50
    tolerance: float | None = None  # instead of the kind's default
    known: str | None = None  # a known, explained difference: reported, not counted as a failure
    note: str | None = None  # why the tolerance was loosened


FACTOR_SUBSET = Subset("orl", (3, 17, 31))
GRAPH_SUBSET = Subset("orl", (2, 9, 21, 30, 38))
METRIC_SUBSET = Subset("yale", (0, 4, 7, 11))

HEAT_DEFAULT_T = (
    "Cai's default t is the mean of EuDist2(fea), whose self-distances are sqrt(max(|a|^2 + |a|^2 - 2 a.a, 0)): "
    "rounding noise up to 5e-8 here instead of 0; ours are exactly 0, so t differs by ~1e-9 relatively and so do "
    "the weights (the case with t given agrees to ~1e-13)")
_BINARY = {"NeighborMode": "KNN", "k": 5, "WeightMode": "Binary"}
_SEMI = {**_BINARY, "bSemiSupervised": 1}


def all_cases() -> list[Case]:
    """The cases of ``python -m tools.crosscheck`` and of the fixtures, in table order."""
    fixed = {"maxIter": 50, "Converge": 1}
    return [
        Case("nmf", "factorization", FACTOR_SUBSET, "nmf", "gnmf", options={"alpha": 0, **fixed}, seed=1),
        Case("nmf_kl", "factorization", FACTOR_SUBSET, "nmf_kl", "gnmf_kl",
             options={"alpha": 0, "maxIter": 50, "kmeansInit": 0}, seed=2),
        Case("nmf_ncw", "factorization", FACTOR_SUBSET, "nmf_ncw", "gnmf",
             options={"alpha": 0, "weight": "NCW", **fixed}, seed=3),
        Case("cf", "factorization", FACTOR_SUBSET, "cf", "lccf",
             options={"alpha": 0, "KernelType": "Linear", **fixed}, seed=4),
        Case("gnmf", "factorization", FACTOR_SUBSET, "gnmf", "gnmf", params={"alpha": 100.0},
             options={"alpha": 100, **fixed}, graph=_BINARY, seed=5),
        Case("semignmf", "factorization", FACTOR_SUBSET, "semignmf", "gnmf", params={"alpha": 100.0},
             options={"alpha": 100, **fixed}, graph=_SEMI, seed=6),
        Case("nmf, one start, stopping rule", "factorization", FACTOR_SUBSET, "nmf", "gnmf",
             options={"alpha": 0}, seed=7, stopping="reference"),
        Case("nmf, 4 starts, stopping rule", "multistart", FACTOR_SUBSET, "nmf", "gnmf",
             options={"alpha": 0, "nRepeat": 4, "minIter": 30}, seed=8, n_starts=4, stopping="reference"),
        Case("gnmf, 4 starts, stopping rule", "multistart", FACTOR_SUBSET, "gnmf", "gnmf",
             params={"alpha": 100.0}, options={"alpha": 100, "nRepeat": 4, "minIter": 30}, graph=_BINARY, seed=9,
             n_starts=4, stopping="reference"),
        Case("graph binary", "graph", GRAPH_SUBSET, graph=_BINARY),
        Case("graph heat kernel, default t", "graph", GRAPH_SUBSET, graph={**_BINARY, "WeightMode": "HeatKernel"},
             tolerance=1e-8, note=HEAT_DEFAULT_T),
        Case("graph heat kernel, t = 0.3", "graph", GRAPH_SUBSET,
             graph={**_BINARY, "WeightMode": "HeatKernel", "t": 0.3}),
        Case("graph cosine", "graph", GRAPH_SUBSET, graph={**_BINARY, "WeightMode": "Cosine"}),
        Case("graph cosine, raw pixels", "graph", Subset("orl", GRAPH_SUBSET.classes, preprocess="none"),
             graph={**_BINARY, "WeightMode": "Cosine"}),
        Case("graph semi-supervised", "graph", GRAPH_SUBSET, graph=_SEMI),
        Case("AC and NMI", "metrics", METRIC_SUBSET, seed=10),
    ]


# -- inputs ----------------------------------------------------------------------------------------------
@dataclass
class Inputs:
    """What both sides get: data (rows are samples), labels, partial labels, initial factors per start."""

    X_rows: np.ndarray
    y: np.ndarray
    y_partial: np.ndarray
    starts: list[dict[str, np.ndarray]]
    labels: np.ndarray | None = None  # metrics: clusterings to score, (n_runs, n)

    def digest(self) -> str:
        """sha256 of the data and the initial factors: a fixture is checked against the same inputs."""
        h = hashlib.sha256(np.ascontiguousarray(self.X_rows).tobytes())
        for start in self.starts:
            for name in sorted(start):
                h.update(np.ascontiguousarray(start[name]).tobytes())
        return h.hexdigest()


def load_subset(subset: Subset, data_dir, mirror=None) -> tuple[np.ndarray, np.ndarray]:
    """The samples of ``subset.classes`` (rows, float64) and their labels renumbered 0..c-1."""
    cfg = yaml.safe_load((CONF_DATASETS / f"{subset.dataset}.yaml").read_text())
    if subset.preprocess is not None:
        cfg["preprocess"] = subset.preprocess
    data = load_dataset(cfg, data_dir, mirror, 0)
    keep = np.isin(data.y, subset.classes)
    y = np.searchsorted(np.asarray(sorted(subset.classes)), data.y[keep])
    return np.ascontiguousarray(data.X[keep]), y.astype(np.int64)


def partial_labels(y: np.ndarray, per_class: int) -> np.ndarray:
    """The first ``per_class`` samples of each class keep their label, the others get -1."""
    out = np.full_like(y, -1)
    for c in np.unique(y):
        first = np.flatnonzero(y == c)[:per_class]
        out[first] = c
    return out


def random_start(rng: np.random.Generator, method: str, m: int, n: int, k: int) -> dict[str, np.ndarray]:
    """Initial factors drawn uniformly from [0, 1), then normalized as the reference code does first.

    U V^T (m x n): U's columns to unit L2 norm, V scaled inversely (GNMF_Multi.m, GNMF_KL_Multi.m). CF's
    W, V (n x n): V's columns to unit L2 norm, W scaled inversely (LCCF_Multi.m, NormV = 1).
    """
    if method == "cf":
        W, V = rng.random((n, k)), rng.random((n, k))
        norms = np.linalg.norm(V, axis=0)
        return {"W": W * norms, "V": V / norms}
    U, V = rng.random((m, k)), rng.random((n, k))
    norms = np.linalg.norm(U, axis=0)
    return {"U": U / norms, "V": V * norms}


def build_inputs(case: Case, data_dir, mirror=None) -> Inputs:
    """Rebuild the inputs of ``case`` from the data and its seed (the same on both sides)."""
    X_rows, y = load_subset(case.subset, data_dir, mirror)
    y_partial = partial_labels(y, case.subset.labelled_per_class)
    starts = []
    labels = None
    if case.kind in ("factorization", "multistart"):
        rng = np.random.default_rng(case.seed)
        n, m = X_rows.shape
        k = len(case.subset.classes)
        starts = [random_start(rng, case.method, m, n, k) for _ in range(case.n_starts)]
    elif case.kind == "metrics":
        labels = clusterings(X_rows, y, case.seed)
    return Inputs(X_rows, y, y_partial, starts, labels)


def clusterings(X_rows: np.ndarray, y: np.ndarray, seed: int) -> np.ndarray:
    """Real clusterings to score: KMeans (one random start each) on the samples, as many clusters as classes.

    Only clusterings that use every cluster are kept (AC and NMI are compared with equal numbers of
    clusters and classes, where Cai's MutualInfo needs no padding).
    """
    from sklearn.cluster import KMeans

    c = int(y.max()) + 1
    runs = []
    for s in range(8):
        labels = KMeans(n_clusters=c, n_init=1, init="random", random_state=seed + s).fit_predict(X_rows)
        if np.unique(labels).size == c:
            runs.append(labels)
    runs.append(y.copy())  # the perfect clustering, relabelled
    runs[-1] = (runs[-1] + 1) % c
    return np.asarray(runs, dtype=np.int64)


# -- our side --------------------------------------------------------------------------------------------
def _stopping_params(case: Case, estimator_params: list[str]) -> dict:
    if "stopping" not in estimator_params:  # the solver before the stopping rule existed
        if case.stopping != "fixed":
            raise NotImplementedError("this version of src.methods has no stopping='reference'")
        return {"max_iter": case.max_iter, "tol": 0.0}
    if case.stopping == "fixed":
        return {"stopping": "fixed", "max_iter": case.max_iter}
    return {"stopping": "reference", "tol": 1e-5, "max_iter": 100_000, "min_iter": 30}


def graph_params(graph: dict) -> dict:
    """Our knn_graph / GNMF parameters for a constructW options dict."""
    weight = {"Binary": "binary", "HeatKernel": "heat", "Cosine": "cosine"}[graph["WeightMode"]]
    params = {"n_neighbors": int(graph["k"]), "weight": weight}
    if "t" in graph:  # Cai's exp(-d^2 / (2 t^2)) is ours exp(-d^2 / t') with t' = 2 t^2
        params["t"] = 2.0 * float(graph["t"]) ** 2
    return params


def run_ours(case: Case, inputs: Inputs):
    """Fit our estimator from the case's initial factors; return it."""
    k = len(case.subset.classes)
    names = methods.parameter_names(methods.REGISTRY[case.method])
    init = inputs.starts[0] if len(inputs.starts) == 1 else inputs.starts
    params = {"n_components": k, "init": init, **case.params, **_stopping_params(case, names)}
    if case.graph is not None:
        params.update(graph_params(case.graph))
    if "normalize_init" in names:
        params["normalize_init"] = True  # Cai's NormalizeUV at the start (the inputs already are normalized)
    estimator = methods.make(case.method, **params)
    y = inputs.y_partial if case.method == "semignmf" else None
    return estimator.fit(inputs.X_rows, y)


def our_graph(case: Case, inputs: Inputs) -> np.ndarray:
    """Our graph of the case's samples, dense (n x n)."""
    W = knn_graph(inputs.X_rows, **graph_params(case.graph))
    if case.graph.get("bSemiSupervised"):
        W = label_graph(W, inputs.y_partial)
    return W.toarray()


def normalize_uv(U: np.ndarray, V: np.ndarray, K_U: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Cai's final NormalizeUV (Norm = 2, NormV = 0): U's columns to unit norm, V scaled inversely.

    ``K_U``: K U for LCCF, whose norm is sqrt(u^T K u); None for the plain L2 norm.
    """
    squared = (U * U).sum(axis=0) if K_U is None else (U * K_U).sum(axis=0)
    norms = np.maximum(1e-15, np.sqrt(squared))
    return U / norms, V * norms


def our_outputs(case: Case, inputs: Inputs) -> dict[str, np.ndarray]:
    """Our side of a case in the shape of the reference outputs (see :func:`compare`)."""
    if case.kind == "graph":
        return {"W": our_graph(case, inputs)}
    if case.kind == "metrics":
        ac = [accuracy(inputs.y, labels) for labels in inputs.labels]
        mi = [nmi(inputs.y, labels) for labels in inputs.labels]
        return {"ac": np.asarray(ac), "nmi": np.asarray(mi)}
    est = run_ours(case, inputs)
    f = est.factors_
    if case.method == "cf":
        X = inputs.X_rows.T
        U, V = normalize_uv(f["W"], f["V"], X.T @ (X @ f["W"]))
    else:
        U, V = normalize_uv(f["U"], f["V"])
    out = {"U": U, "V": V, "nIter": np.asarray(float(est.n_iter_))}
    history = np.asarray(est.objective_history_, dtype=np.float64)
    if history.size:
        out["obj"] = history
    if case.kind == "multistart":
        out["chosen"] = np.asarray(float(est.best_start_ + 1))  # 1-based, as the driver reports it
        out["start_obj"] = np.asarray(est.start_objectives_, dtype=np.float64)
    return out


# -- the comparison --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Row:
    """One line of the table: a case, what was compared, the largest difference, the tolerance."""

    case: str
    what: str
    difference: float
    tolerance: float
    known: str | None = None  # the explanation of a known difference
    note: str | None = None  # the explanation of a loosened tolerance

    @property
    def passed(self) -> bool:
        return bool(np.isfinite(self.difference) and self.difference <= self.tolerance)

    @property
    def result(self) -> str:
        if self.passed:
            return "pass"
        return "known difference" if self.known else "FAIL"


def relative_difference(ours: np.ndarray, reference: np.ndarray) -> float:
    """max |ours - reference| / max |reference| (inf on a shape mismatch)."""
    ours, reference = np.asarray(ours, dtype=np.float64), np.asarray(reference, dtype=np.float64)
    if ours.shape != reference.shape:
        return float("inf")
    scale = np.max(np.abs(reference)) if reference.size else 0.0
    diff = np.max(np.abs(ours - reference)) if reference.size else 0.0
    return float(diff / scale) if scale > 0 else float(diff)


def reference_objective(case: Case, reference: dict) -> np.ndarray | None:
    """The part of the reference objective history that ours records, or None if it records none.

    Fixed iterations from one start: Cai's history starts with the objective at the initial factors, ours
    with the one after the first update (the first entry is dropped). GNMF_KL keeps no history when
    maxIter is set (it returns 0).
    """
    obj = np.atleast_1d(np.asarray(reference.get("obj", []), dtype=np.float64)).ravel()
    if obj.size <= 1:
        return None
    if case.kind == "factorization" and case.stopping == "fixed":
        return obj[1:]
    return obj


def compare(case: Case, ours: dict, reference: dict) -> list[Row]:
    """The rows of the table for one case (see the module docstring for the differences)."""
    rows = []
    if case.kind == "graph":
        tol = case.tolerance if case.tolerance is not None else TOL_EXACT
        return [Row(case.name, "W", relative_difference(ours["W"], reference["W"]), tol, case.known,
                    case.note)]
    if case.kind == "metrics":
        for key, label in (("ac", "AC"), ("nmi", "NMI")):
            diff = float(np.max(np.abs(np.ravel(ours[key]) - np.ravel(reference[key]))))
            rows.append(Row(case.name, f"{label} of {np.size(ours[key])} clusterings (absolute)", diff, TOL_EXACT))
        return rows
    factor_names = ("W", "V") if case.method == "cf" else ("U", "V")
    diff = max(relative_difference(ours[key], reference[key]) for key in ("U", "V"))
    rows.append(Row(case.name, f"factors {', '.join(factor_names)} (normalized)", diff, TOL_FACTORS))
    obj = reference_objective(case, reference)
    if obj is not None:
        rows.append(Row(case.name, f"objective history ({obj.size})", relative_difference(ours.get("obj"), obj),
                        TOL_OBJECTIVE))
    ours_iter, ref_iter = float(ours["nIter"]), float(np.ravel(reference["nIter"])[0])
    rows.append(Row(case.name, f"iterations (ours {ours_iter:.0f}, reference {ref_iter:.0f})",
                    abs(ours_iter - ref_iter), 0.0))
    if case.kind == "multistart":
        ours_c, ref_c = float(ours["chosen"]), float(np.ravel(reference["chosen"])[0])
        rows.append(Row(case.name, f"chosen start (ours {ours_c:.0f}, reference {ref_c:.0f})",
                        abs(ours_c - ref_c), 0.0))
        rows.append(Row(case.name, "objective of every start after min_iter",
                        relative_difference(ours["start_obj"], np.ravel(reference["start_obj"])), TOL_OBJECTIVE))
    return rows


def reference_graph_options(case: Case, inputs: Inputs) -> dict | None:
    """constructW's options struct for the case's graph (semi-supervised: gnd and semiSplit), or None."""
    if case.graph is None:
        return None
    options = {key: (float(v) if isinstance(v, (int, float)) else v) for key, v in case.graph.items()}
    if case.graph.get("bSemiSupervised"):
        options["gnd"] = inputs.y.astype(np.float64)[:, None] + 1.0
        options["semiSplit"] = (inputs.y_partial >= 0)[:, None]
    return options


def empty_graph(n: int) -> sp.csc_matrix:
    """An all-zero sparse n x n graph (the W argument of the cases without a graph)."""
    return sp.csc_matrix((n, n), dtype=np.float64)
