"""Tests of CNMF (Liu et al. 2012; src.methods.cnmf): one step by eqs. 2-3 with dense matrices, reductions, bad input."""

import numpy as np
import pytest

from src.errors import ConfigError
from src.methods.cnmf import CNMF
from src.methods.cnmf_kl import CNMFKL
from src.methods.concept import concept_rules
from src.methods.graph.label_matrix import label_matrix
from src.methods.nmf import NMF
from src.methods.nmf_kl import NMFKL

from helpers import AT_THE_CAP, FIXED, assert_same_fit, partial_labels, random_init


# -- reductions: no label means the unconstrained method ------------------------------------------------
@pytest.mark.parametrize("no_labels", [None, "all -1"])
@pytest.mark.parametrize("constrained, plain", [(CNMF, NMF), (CNMFKL, NMFKL)])
@pytest.mark.filterwarnings(AT_THE_CAP)  # the same 50 iterations of both compared, not converged fits
def test_cnmf_without_labels_is_nmf(constrained, plain, no_labels, rng):
    X = rng.random((14, 9))
    y = None if no_labels is None else np.full(14, -1)
    U0, V0 = rng.random((9, 3)), rng.random((14, 3))
    ours = constrained(n_components=3, max_iter=50, init={"U": U0, "Z": V0}).fit(X, y)
    ref = plain(n_components=3, max_iter=50, init={"U": U0, "V": V0}).fit(X)
    assert_same_fit(ours, ref, factors=("U", ("Z", "V")))


# -- one step by hand, dense matrices, the papers' equations ----------------------------------------------
def test_one_cnmf_step_follows_eqs_2_and_3(rng):
    X_rows = rng.random((10, 7))
    y = partial_labels(10, rng, classes=2)
    init = random_init(CNMF, rng, 7, 10, 3, y)
    model = CNMF(n_components=3, max_iter=1, init=init, **FIXED).fit(X_rows, y)
    X, A, U, Z = X_rows.T, label_matrix(y).toarray(), init["U"], init["Z"]
    Z1 = Z * (A.T @ X.T @ U) / (A.T @ A @ Z @ U.T @ U)  # eq. 3
    U1 = U * (X @ A @ Z1) / (U @ Z1.T @ A.T @ A @ Z1)  # eq. 2
    np.testing.assert_allclose(model.factors_["Z"], Z1, rtol=1e-12)
    np.testing.assert_allclose(model.factors_["U"], U1, rtol=1e-12)
    assert model.objective_history_[0] == pytest.approx(np.linalg.norm(X - U1 @ Z1.T @ A.T) ** 2, rel=1e-12)
    np.testing.assert_allclose(model.embedding_, A @ Z1 * np.linalg.norm(U1, axis=0), rtol=1e-12)


def test_cnmf_rejects_negative_data_and_bad_init(rng):
    X = rng.random((6, 4))
    y = np.array([0, 0, -1, -1, 1, 1])
    with pytest.raises(ConfigError, match="negative"):
        CNMF(n_components=2).fit(-X, y)
    with pytest.raises(ConfigError, match=r"init\['Z'\] has shape"):  # Z has c + n_u = 4 rows, not n = 6
        CNMF(n_components=2, init={"U": rng.random((4, 2)), "Z": rng.random((6, 2))}).fit(X, y)
    with pytest.raises(ConfigError, match="kernel='dense'"):
        concept_rules(X.T, None, "dense")
