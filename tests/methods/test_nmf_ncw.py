"""Tests of the normalized-cut weighted NMF (src.methods.nmf_ncw): the weights, one step by hand, NMF on weighted data."""

import numpy as np
import pytest

from src.errors import ConfigError
from src.methods.graph.knn import knn_graph
from src.methods.nmf import NMF
from src.methods.nmf_ncw import NMFNCW, ncw_weights

from helpers import AT_THE_CAP, FIXED, initial_factors, traced_peak


# -- NMF with normalized-cut weighting -----------------------------------------------------------
def test_ncw_weights_are_d_to_the_minus_half(rng):
    X = rng.random((7, 11))  # papers' orientation: 7 features x 11 samples
    X[:, 4] = 0.0  # an all-zero sample gets weight 0, not inf
    d = X.T @ X @ np.ones(11)
    expected = np.where(d > 0, 1 / np.sqrt(np.where(d > 0, d, 1)), 0.0)
    np.testing.assert_allclose(ncw_weights(X), expected, rtol=1e-14)
    assert ncw_weights(X)[4] == 0


def test_ncw_weights_never_form_the_gram_matrix():
    n, m = 5000, 10
    X = np.random.default_rng(0).random((m, n))
    _, peak = traced_peak(lambda: ncw_weights(X))
    assert peak < n * n * 8 / 100


@pytest.mark.filterwarnings(AT_THE_CAP)  # the same 40 iterations of both compared, not converged fits
def test_nmf_ncw_is_nmf_on_the_weighted_data(rng):
    X = rng.random((15, 8))
    init = initial_factors(rng, 8, 15, 3)
    ours = NMFNCW(n_components=3, max_iter=40, init=init).fit(X)
    weights = 1 / np.sqrt(X @ X.T @ np.ones(15))  # per sample (row here)
    nmf = NMF(n_components=3, max_iter=40, init=init).fit(X * weights[:, None])
    for name in ("U", "V"):
        np.testing.assert_allclose(ours.factors_[name], nmf.factors_[name], rtol=1e-10)
    np.testing.assert_allclose(ours.objective_history_, nmf.objective_history_, rtol=1e-10)
    np.testing.assert_allclose(ours.sample_weights_, weights, rtol=1e-12)
    # Xu et al.'s normalization: U's columns to unit length, V scaled so that U V^T is unchanged
    U = ours.factors_["U"]
    np.testing.assert_allclose(ours.embedding_, ours.factors_["V"] * np.linalg.norm(U, axis=0), rtol=1e-12)
    np.testing.assert_allclose((U / np.linalg.norm(U, axis=0)) @ ours.embedding_.T, U @ ours.factors_["V"].T)


def test_one_nmf_ncw_step_by_hand(rng):
    X = rng.random((9, 6))
    init = initial_factors(rng, 6, 9, 2)
    model = NMFNCW(n_components=2, max_iter=1, init=init, **FIXED).fit(X)
    Xp = X.T
    D = np.diag(Xp.T @ Xp @ np.ones(9))  # D = diag(X^T X 1)
    Xw = Xp @ np.diag(np.diag(D) ** -0.5)  # X D^{-1/2}
    U, V = init["U"], init["V"]
    V1 = V * (Xw.T @ U) / (V @ U.T @ U)
    U1 = U * (Xw @ V1) / (U @ V1.T @ V1)
    np.testing.assert_allclose(model.factors_["V"], V1, rtol=1e-12)
    np.testing.assert_allclose(model.factors_["U"], U1, rtol=1e-12)
    assert model.objective_history_[0] == pytest.approx(np.linalg.norm(Xw - U1 @ V1.T) ** 2, rel=1e-12)


def test_bad_graph_arguments_name_themselves(rng):
    X = rng.random((8, 3))
    with pytest.raises(ConfigError, match="weight='dot'"):
        knn_graph(X, weight="dot")
    with pytest.raises(ConfigError, match="n_neighbors=-1"):
        knn_graph(X, n_neighbors=-1)
    with pytest.raises(ConfigError, match=r"t=nan"):
        knn_graph(X, weight="heat", t=float("nan"))
    with pytest.raises(ConfigError, match="negative"):
        NMFNCW().fit(-X)
