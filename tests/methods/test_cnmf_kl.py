"""Tests of CNMF-KL (src.methods.cnmf_kl): one step by the derived KL rules with dense matrices, stacks of starts."""

import numpy as np
import pytest

from src.methods.cnmf_kl import CNMFKL
from src.methods.graph.label_matrix import label_matrix

from helpers import FIXED, partial_labels, random_init


def test_one_cnmf_kl_step_follows_the_derived_rules(rng):
    X_rows = rng.random((10, 7))
    y = partial_labels(10, rng, classes=2)
    init = random_init(CNMFKL, rng, 7, 10, 3, y)
    model = CNMFKL(n_components=3, max_iter=1, init=init, **FIXED).fit(X_rows, y)
    X, A, U, Z = X_rows.T, label_matrix(y).toarray(), init["U"], init["Z"]
    R = X / (U @ Z.T @ A.T)
    # z_ak <- z_ak sum_ij u_ik r_ij a_ja / (sum_i u_ik)(sum_j a_ja), written with explicit sums
    Z1 = Z * np.einsum("ik,ij,ja->ak", U, R, A) / np.einsum("ik,ja->ak", U, A)
    V1 = A @ Z1
    U1 = U * ((X / (U @ V1.T)) @ V1) / V1.sum(axis=0)
    np.testing.assert_allclose(model.factors_["Z"], Z1, rtol=1e-12)
    np.testing.assert_allclose(model.factors_["U"], U1, rtol=1e-12)
    Y = U1 @ V1.T
    assert model.objective_history_[0] == pytest.approx((X * np.log(X / Y) - X + Y).sum(), rel=1e-12)
    # the embedding scales V by the L2 norms of U's columns, as GNMF_KL_Multi.m (Norm = 2)
    np.testing.assert_allclose(model.embedding_, V1 * np.linalg.norm(U1, axis=0), rtol=1e-12)