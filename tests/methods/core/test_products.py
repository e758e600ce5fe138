"""SampleBlocks (src.methods.core.products): the fused passes over X by blocks of samples change nothing but speed.

The one-step tests elsewhere check the updates against the papers' equations on data that fit in one
block. Here the same fits run with blocks of 3 samples (so that a block ends inside a class, the last block
is short, and the labelled samples of one class fall in different blocks) and must give the same factors
and objective as one block, iteration after iteration. A wrong row offset, a block updated twice or a
class row updated from part of its samples would break the equality.
"""

import numpy as np
import pytest

from threadpoolctl import threadpool_limits

from src.methods.core import products
from src.methods.concept import CCF, CF
from src.methods.graph.label_matrix import label_matrix
from src.methods.lcf import LCF
from src.methods.nlcf import NLCF
from src.methods.nmf import NMF
from src.methods.core.products import SampleBlocks

from helpers import AT_THE_CAP

M, N, K = 7, 20, 3


@pytest.fixture(autouse=True)
def one_thread():
    """The blocked passes run with one BLAS thread (threads are simulated by patching ``blas_threads``)."""
    with threadpool_limits(limits=1, user_api="blas"):
        yield


def fit(cls, X_rows, y, init, block_elements, monkeypatch, **params):
    monkeypatch.setattr(products, "BLOCK_ELEMENTS", block_elements)
    return cls(n_components=K, max_iter=4, init={f: v.copy() for f, v in init.items()}, **params).fit(X_rows, y)


def random_factors(name, rng, y):
    """Initial factors of method ``name`` for the N x M data of these tests."""
    if name in ("nmf", "nlcf"):
        return {"U": rng.random((M, K)), "V": rng.random((N, K))}
    if name == "ccf":
        return {"W": rng.random((N, K)), "Z": rng.random((label_matrix(y).shape[1], K))}
    return {"W": rng.random((N, K)), "V": rng.random((N, K))}


METHODS = {"nmf": (NMF, {}), "cf": (CF, {}), "ccf": (CCF, {}), "lcf": (LCF, {"lam": 0.5}), "nlcf": (NLCF, {"mu": 0.5})}


def labels_with_a_singleton_class():
    """Classes 0 (5 samples, spread over blocks), 1 (2 samples), 2 (one sample: its own row of Z); rest -1."""
    y = np.full(N, -1)
    y[[0, 4, 7, 11, 19]] = 0
    y[[2, 3]] = 1
    y[9] = 2
    return y


def one_start_case(name, seed):
    """Data (N x M), labels (CCF only), the class, its parameters and an initialization for method ``name``."""
    rng = np.random.default_rng(seed)
    X_rows = rng.random((N, M))
    y = labels_with_a_singleton_class() if name == "ccf" else None
    cls, params = METHODS[name]
    return X_rows, y, cls, params, random_factors(name, rng, y)


def assert_same_fit(model, reference):
    for factor, value in reference.factors_.items():
        np.testing.assert_allclose(model.factors_[factor], value, rtol=1e-12, err_msg=factor)
    np.testing.assert_allclose(model.objective_history_, reference.objective_history_, rtol=1e-12)


@pytest.mark.parametrize("name", list(METHODS))
@pytest.mark.filterwarnings(AT_THE_CAP)  # four iterations (fit) compared, converged or not
def test_blocks_of_three_samples_equal_one_block(name, monkeypatch):
    X_rows, y, cls, params, init = one_start_case(name, 7)
    whole = fit(cls, X_rows, y, init, 10**9, monkeypatch, **params)
    blocked = fit(cls, X_rows, y, init, 3 * M, monkeypatch, **params)
    assert len(SampleBlocks(X_rows.T).blocks) == 7  # 3, 3, ..., 3, 2 samples
    assert_same_fit(blocked, whole)


@pytest.mark.parametrize("name", list(METHODS))
@pytest.mark.filterwarnings(AT_THE_CAP)  # four iterations (fit) compared, converged or not
def test_blocks_shared_among_threads_equal_one_block(name, monkeypatch):
    """Three threads, each with its own range of blocks, give the factors and objective of one block."""
    X_rows, y, cls, params, init = one_start_case(name, 5)
    whole = fit(cls, X_rows, y, init, 10**9, monkeypatch, **params)
    monkeypatch.setattr(products, "blas_threads", lambda: 3)
    monkeypatch.setattr(products, "PARALLEL_MIN_BLOCKS", 1)
    threaded = fit(cls, X_rows, y, init, 2 * M, monkeypatch, **params)
    assert [len(part) for part in SampleBlocks(X_rows.T).parts(products.pass_workers(N * M))] == [3, 4, 4]
    assert 3 in products._POOLS  # the pool ran the ranges
    assert_same_fit(threaded, whole)


def test_part_slices_cover_the_rows_once_in_order():
    for length, width, workers in [(20, 7, 3), (5, 1, 8), (1000, 3, 2), (1, 100, 1)]:
        parts = products.part_slices(length, width, workers)
        assert len(parts) == min(workers, length)
        rows = np.concatenate([np.arange(length)[block] for part in parts for block in part])
        np.testing.assert_array_equal(rows, np.arange(length))
        assert all(block.stop - block.start <= products.block_rows(width) for part in parts for block in part)


def test_pass_workers_needs_blocks_for_every_thread(monkeypatch):
    monkeypatch.setattr(products, "blas_threads", lambda: 2)
    big = products.PARALLEL_MIN_BLOCKS * 2 * products.BLOCK_ELEMENTS
    assert products.pass_workers(big) == 2
    assert products.pass_workers(big - 1) == 1
    monkeypatch.setattr(products, "blas_threads", lambda: 1)
    assert products.pass_workers(10 * big) == 1


@pytest.mark.parametrize("name", ["cf", "ccf", "lcf", "nlcf"])
def test_blocks_of_stacked_starts_equal_one_block(name, monkeypatch):
    """The same with four starts iterated together: every block serves every start of the stack."""
    rng = np.random.default_rng(11)
    X_rows = rng.random((N, M))
    y = labels_with_a_singleton_class() if name == "ccf" else None
    cls, params = METHODS[name]
    inits = [random_factors(name, rng, y) for _ in range(4)]
    runs = []
    for block_elements in (10**9, 3 * M):
        monkeypatch.setattr(products, "BLOCK_ELEMENTS", block_elements)
        runs.append(cls(n_components=K, init=inits, n_starts=4, min_iter=3, max_iter=5, stopping="fixed",
                        **params).fit(X_rows, y))
    whole, blocked = runs
    np.testing.assert_allclose(blocked.start_objectives_, whole.start_objectives_, rtol=1e-12)
    for factor, value in whole.factors_.items():
        np.testing.assert_allclose(blocked.factors_[factor], value, rtol=1e-12, err_msg=factor)
    np.testing.assert_allclose(blocked.objective_history_, whole.objective_history_, rtol=1e-12)


@pytest.mark.filterwarnings(AT_THE_CAP)  # four iterations (fit) suffice
def test_ccf_keeps_one_row_per_labelled_class_across_blocks(monkeypatch):
    rng = np.random.default_rng(3)
    y = labels_with_a_singleton_class()
    model = fit(CCF, rng.random((N, M)), y, {"W": rng.random((N, K)), "Z": rng.random((label_matrix(y).shape[1], K))},
                3 * M, monkeypatch)
    V = label_matrix(y) @ model.factors_["Z"]
    for c in (0, 1):
        members = np.flatnonzero(y == c)
        np.testing.assert_array_equal(V[members], np.broadcast_to(V[members[0]], V[members].shape))


def three_blocks(X) -> SampleBlocks:
    """X (m x 11) in blocks of 4, 4 and 3 samples (blocks of 4 m entries)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(products, "BLOCK_ELEMENTS", 4 * X.shape[0])
        blocks = SampleBlocks(X)
    assert blocks.blocks == [slice(0, 4), slice(4, 8), slice(8, 11)]
    return blocks


def test_sample_blocks_fused_returns_x_times_the_updated_factor():
    rng = np.random.default_rng(0)
    X = rng.random((5, 11))
    P, B = rng.random((5, 2)), rng.random((11, 2))
    seen = []

    def rule(block, G):
        np.testing.assert_allclose(G, X[:, block].T @ P, rtol=1e-13)
        seen.extend(range(11)[block])
        B[block] *= 2.0

    XB = three_blocks(X).fused(P, rule, B)
    assert seen == list(range(11))  # every sample once, in order
    np.testing.assert_allclose(XB, X @ B, rtol=1e-13)


TINY = np.finfo(np.float64).tiny


def test_a_pass_reads_subnormal_entries_as_zeros_and_the_factor_keeps_them():
    rng = np.random.default_rng(1)
    X = rng.random((5, 11))
    P, B = rng.random((5, 2)), rng.random((11, 2))
    P[1, 0] = B[[0, 6], 1] = TINY / 8  # subnormal
    P[2, 1], P[3, 1] = -0.5, -TINY / 4  # a signed operand (CF's X W with signed data) keeps its negative entries

    def pass_over(P, B):  # X B and the blocks of X^T P the rule was handed
        handed = []

        def rule(block, G):
            handed.append(G.copy())
            B[block] *= 1.0  # rows of B touched, values kept

        return three_blocks(X).fused(P, rule, B), handed

    kept = B.copy()
    XB, handed = pass_over(P, B)
    zeroed, handed_zeroed = pass_over(np.where(np.abs(P) < TINY, 0, P), np.where(B < TINY, 0, B))
    np.testing.assert_array_equal(XB, zeroed)  # the same products of the same numbers
    assert len(handed) == len(handed_zeroed) == 3
    for G, G_zeroed in zip(handed, handed_zeroed):
        np.testing.assert_array_equal(G, G_zeroed)
    np.testing.assert_array_equal(B, kept)  # the factor keeps its subnormal entries
    np.testing.assert_allclose(XB, X @ kept, rtol=1e-13)


@pytest.mark.filterwarnings(AT_THE_CAP)  # four iterations compared, converged or not
def test_a_fit_through_subnormal_factors_is_the_fit_of_the_plain_products(monkeypatch):
    """Factors with subnormal entries (PCGNMF reaches them on COIL20): the products read them as zeros, the
    rules keep every bit, and the fit is the one of plain products (rtol 1e-12, no absolute tolerance, so a
    subnormal entry flushed to zero in a factor would fail)."""
    rng = np.random.default_rng(3)
    X_rows = rng.random((N, M))
    init = random_factors("nmf", rng, None)
    init["V"][::3, 0] = TINY / 7
    init["U"][1, 2] = TINY / 3
    read_as_zeros = []
    zeroing, looks = products.without_subnormals, products.has_subnormals
    monkeypatch.setattr(products, "without_subnormals", lambda F: read_as_zeros.append(1) or zeroing(F))
    model = fit(NMF, X_rows, None, init, 3 * M, monkeypatch)
    assert read_as_zeros or not products.short_and_wide()  # the fused passes (OpenBLAS) read them as zeros
    monkeypatch.setattr(products, "has_subnormals", lambda B: False)
    plain = fit(NMF, X_rows, None, init, 3 * M, monkeypatch)
    assert looks(plain.factors_["V"])  # still there after the last update
    for factor, value in plain.factors_.items():
        np.testing.assert_allclose(model.factors_[factor], value, rtol=1e-12, atol=0, err_msg=factor)
    np.testing.assert_allclose(model.objective_history_, plain.objective_history_, rtol=1e-12)
