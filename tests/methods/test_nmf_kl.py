"""Tests of NMF-KL (src.methods.nmf_kl): the blocked KL products over stacks of starts, blocks and threads.

The one-step test against Lee and Seung's rules and the comparison with scikit-learn's MU are in
test_nmf.py; here the products of :class:`KLProducts` are checked against the dense formulas for every
start of a stack, whatever the blocks, the row ranges of the threads and the memory layout of X.
"""

import numpy as np
import pytest
from scipy.special import rel_entr

from src.methods import nmf_kl
from src.methods.core import products
from src.methods.core.multiplicative import EPS
from src.methods.nmf_kl import KLProducts, kl_rules


def dense_products(X, U, V):
    """R^T U, R V and D(X || U V^T) of one start with whole matrices, R = X / max(U V^T, EPS)."""
    Y = U @ V.T
    R = X / np.maximum(Y, EPS)
    return R.T @ U, R @ V, rel_entr(X, np.maximum(Y, EPS)).sum() - X.sum() + Y.sum()


@pytest.mark.parametrize("order", ["C", "F"])  # samples-major or features-major passes
@pytest.mark.parametrize("block_elements, threads", [(2**16, 1), (40, 1), (20, 3), (1, 2)])
def test_blocked_products_of_every_start_equal_the_dense_formulas(order, block_elements, threads, monkeypatch, rng):
    X_rows = np.asarray(rng.random((23, 11)), order=order)
    X_rows[X_rows < 0.15] = 0.0  # zeros in X: 0 log 0 = 0, and whole zero blocks
    X_rows[:4] = 0.0
    X = X_rows.T
    s, k = 3, 4
    U, V = rng.random((s, 11, k)), rng.random((s, 23, k))
    U[1, :, 2] = 0.0  # a zero column: Y floored at EPS where it is 0
    V[1, :, 2] = 0.0
    monkeypatch.setattr(products, "BLOCK_ELEMENTS", block_elements)
    monkeypatch.setattr(products, "blas_threads", lambda: threads)
    kl = KLProducts(X)
    parts = kl._blocks(products.pass_workers(kl.M.size))
    assert len(parts) == threads
    assert len(parts[0]) > 1 or block_elements == 2**16
    RtU, divergence = kl.v_numerator(U, V, divergence=True)
    RV = kl.u_numerator(U, V)
    assert RtU.shape == V.shape and RV.shape == U.shape and divergence.shape == (s,)
    for i in range(s):
        want_RtU, want_RV, want_divergence = dense_products(X, U[i], V[i])
        np.testing.assert_allclose(RtU[i], want_RtU, rtol=1e-12)
        np.testing.assert_allclose(RV[i], want_RV, rtol=1e-12)
        assert divergence[i] == pytest.approx(want_divergence, rel=1e-12)
    # the same pass without the objective gives the same numerator; single (p x k) matrices as a stack of one
    np.testing.assert_array_equal(kl.v_numerator(U, V)[0], RtU)
    one = kl.v_numerator(U[2], V[2], divergence=True)
    np.testing.assert_allclose(one[0], RtU[2], rtol=1e-14)
    assert isinstance(one[1], float) and one[1] == pytest.approx(divergence[2], rel=1e-14)


def test_threads_change_nothing_but_rounding(monkeypatch, rng):
    X = rng.random((30, 50))
    factors = {"U": rng.random((2, 30, 3)), "V": rng.random((2, 50, 3))}
    monkeypatch.setattr(products, "BLOCK_ELEMENTS", 64)
    fits = {}
    for threads in (1, 2):
        monkeypatch.setattr(products, "blas_threads", lambda threads=threads: threads)
        update, objective = kl_rules(X)
        current = {name: value.copy() for name, value in factors.items()}
        history = []
        for _ in range(5):
            update(current)
            history.append(objective(current))
        fits[threads] = current, np.array(history)
    for name in factors:
        np.testing.assert_allclose(fits[2][0][name], fits[1][0][name], rtol=1e-12)
    np.testing.assert_allclose(fits[2][1], fits[1][1], rtol=1e-12)
    assert products._POOLS  # the pool was used


def test_objective_hands_the_next_v_numerator_to_the_update(rng):
    """update after objective (the handed-over numerator) = update alone; the handoff holds only for the
    same arrays."""
    X = rng.random((12, 9))
    factors = {"U": rng.random((2, 12, 3)), "V": rng.random((2, 9, 3))}
    fresh = {name: value.copy() for name, value in factors.items()}
    update, objective = kl_rules(X)
    objective(factors)
    update(factors)
    alone, _ = kl_rules(X)
    alone(fresh)
    for name in factors:
        np.testing.assert_allclose(factors[name], fresh[name], rtol=1e-14)
    others = {name: 2.0 * value for name, value in factors.items()}  # other arrays, other values
    expected = {name: value.copy() for name, value in others.items()}
    objective(factors)  # keeps the numerator of ``factors``
    update(others)  # must not use it
    alone(expected)
    for name in others:
        np.testing.assert_allclose(others[name], expected[name], rtol=1e-14)


def test_float32_objective_is_close_to_the_float64_one(rng):
    """The float32 objective (log2 of float32 blocks, sums in float64) stays far below the stopping tol."""
    X = rng.random((200, 120)).astype(np.float32)
    U, V = rng.random((1, 120, 5)).astype(np.float32), rng.random((1, 200, 5)).astype(np.float32)
    single = KLProducts(X.T).v_numerator(U, V, divergence=True)[1][0]
    double = dense_products(X.T.astype(np.float64), U[0].astype(np.float64), V[0].astype(np.float64))[2]
    assert abs(single - double) <= 1e-7 * double
