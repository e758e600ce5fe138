"""Slow end-to-end checks on whole real data sets (``make test-slow``)."""

import numpy as np
import pytest

from src import methods
from src.protocol.clustering import best_kmeans
from src.data.named import load_named
from src.protocol.metrics import nmi

from helpers import AT_THE_CAP

# Deng Cai's GNMF demo on the whole of COIL20: unit-norm samples, KMeans best of 20 on the representation.
CAI_COIL20_NMI = {"kmeans": 0.7386, "nmf": 0.7436, "gnmf": 0.8760}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CAI_COIL20_NMI))
def test_whole_coil20_lands_near_cais_demo(name):
    coil = load_named("coil20")
    params = {"gnmf": {"alpha": 100.0, "n_neighbors": 5, "weight": "binary", "normalize_init": True}}.get(name, {})
    if name != "kmeans":  # the demo's options.maxIter = 100: 10 starts of 30 iterations, the best to 100
        params.update(stopping="fixed", n_starts=10, min_iter=30, max_iter=100, random_state=0)
    model = methods.make(name, n_components=20, **params)
    Z = model.fit_transform(coil.X)
    labels, _ = best_kmeans(Z, 20, 20, "euclidean", seed=0)
    score = nmi(coil.y, labels)
    print(f"COIL20 {name}: NMI {score:.4f} (Cai's demo {CAI_COIL20_NMI[name]})")
    assert abs(score - CAI_COIL20_NMI[name]) < 0.04


@pytest.mark.slow
@pytest.mark.filterwarnings(AT_THE_CAP)  # 200 iterations of each: the two are compared, converged or not
def test_cnmf_beats_nmf_on_orl_with_labels():
    orl = load_named("orl")
    keep = orl.y < 10
    X, y = orl.X[keep], orl.y[keep]
    rng = np.random.default_rng(0)
    y_partial = np.full_like(y, -1)
    for c in range(10):
        y_partial[rng.choice(np.flatnonzero(y == c), 2, replace=False)] = c
    scores = {}
    for name in ("nmf", "cnmf"):
        Z = methods.make(name, n_components=10, max_iter=200, random_state=0).fit_transform(X, y_partial)
        scores[name] = nmi(y, best_kmeans(Z, 10, 20, "euclidean", seed=0)[0])
    assert scores["cnmf"] > scores["nmf"]
