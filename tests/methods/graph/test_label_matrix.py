"""Tests of the label constraint matrix A (src.methods.graph.label_matrix), the CNMF and CCF papers' example, and of
SemiGNMF's labelled block applied through per-class sums."""

import numpy as np
import pytest
import scipy.sparse as sp

from src.errors import ConfigError
from src.methods.graph.knn import knn_graph, label_graph
from src.methods.graph.label_matrix import SameClassBlock, label_matrix, n_constraint_columns

from helpers import random_partial_labels


# -- the label constraint matrix ------------------------------------------------------------------------
def test_label_matrix_reproduces_the_ccf_paper_example():
    # x1, x2, x3 in class I, x4, x5 in class II, x6 in class III, then n - 6 unlabelled: A = [[C, 0], [0, I]]
    y = np.array([0, 0, 0, 1, 1, 2, -1, -1, -1, -1])
    C = np.array([[1, 0, 0], [1, 0, 0], [1, 0, 0], [0, 1, 0], [0, 1, 0], [0, 0, 1]])
    expected = np.block([[C, np.zeros((6, 4))], [np.zeros((4, 3)), np.eye(4)]])
    A = label_matrix(y)
    assert sp.isspmatrix_csr(A) and A.dtype == np.float64
    np.testing.assert_array_equal(A.toarray(), expected)
    assert n_constraint_columns(y) == 7


def test_label_matrix_sorts_classes_and_keeps_sample_order():
    y = np.array([5, -1, 0, 5, -1, 2])
    expected = np.array(
        [
            [0, 0, 1, 0, 0],  # class 5 is the third labelled class
            [0, 0, 0, 1, 0],  # first unlabelled sample
            [1, 0, 0, 0, 0],
            [0, 0, 1, 0, 0],
            [0, 0, 0, 0, 1],  # second unlabelled sample
            [0, 1, 0, 0, 0],
        ]
    )
    np.testing.assert_array_equal(label_matrix(y).toarray(), expected)
    assert n_constraint_columns(y) == 5


def test_label_matrix_without_labels_is_the_identity():
    np.testing.assert_array_equal(label_matrix(np.full(4, -1)).toarray(), np.eye(4))
    fully = label_matrix(np.array([1, 0, 1]))  # every sample labelled: no identity block
    np.testing.assert_array_equal(fully.toarray(), [[0, 1], [1, 0], [0, 1]])


def test_label_matrix_rejects_bad_labels():
    with pytest.raises(ConfigError, match="1-D"):
        label_matrix(np.zeros((2, 2), dtype=int))
    with pytest.raises(ConfigError, match="label -2"):
        label_matrix(np.array([0, -2]))


# -- SemiGNMF's labelled block through per-class sums --------------------------------------------------------
def explicit_block(y) -> sp.csr_matrix:
    """The labelled block S written out by the explicit graph code: label_graph of the empty graph."""
    n = len(y)
    return label_graph(sp.csr_matrix((n, n)), y)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", [(), (3,)], ids=["matrix", "stack"])
def test_same_class_block_is_the_explicit_label_block(shape, dtype, rng):
    n, k = 40, 4
    y = random_partial_labels(rng, n, 4, 25)
    y[np.flatnonzero(y == 3)[1:]] = -1  # class 3 keeps one labelled sample: no edge
    block, S = SameClassBlock(y), explicit_block(y)
    V = rng.random((*shape, n, k)).astype(dtype)
    expected = np.stack([S @ V_i for V_i in V.reshape(-1, n, k).astype(np.float64)]).reshape(V.shape)
    rtol = 1e-12 if dtype == np.float64 else 1e-6
    product = block.dot(V)
    assert product.shape == V.shape and product.dtype == dtype and np.all(product >= 0)
    np.testing.assert_allclose(product, expected, rtol=rtol)
    np.testing.assert_array_equal(product[..., y < 0, :], 0.0)
    out = rng.random(V.shape).astype(dtype)
    np.testing.assert_allclose(block.add_dot(V, out.copy()), out + expected, rtol=rtol)
    np.testing.assert_array_equal(block.degree(), np.asarray(S.sum(axis=1)).ravel())
    assert block.n_edges == sp.triu(S, k=1).nnz and block.n_labelled == np.count_nonzero(y >= 0)
    # Tr(V^T (D - S) V), per start, = the sum over the block's edges of ||v_i - v_j||^2
    L = np.diag(block.degree()) - S.toarray()
    rows, cols = sp.triu(S, k=1).nonzero()
    for index, V_i in enumerate(V.reshape(-1, n, k).astype(np.float64)):
        by_edges = ((V_i[rows] - V_i[cols]) ** 2).sum()
        value = block.smoothness(V_i)
        assert isinstance(value, float)
        assert value == pytest.approx(by_edges, rel=1e-12 if dtype == np.float64 else 1e-5)
        assert value == pytest.approx(np.trace(V_i.T @ L @ V_i), rel=1e-10)
        if shape:
            assert block.smoothness(V)[index] == pytest.approx(value, rel=1e-12)


def test_same_class_block_outside_plus_the_block_is_the_label_graph(rng):
    X = rng.random((30, 5))
    W = knn_graph(X, 4, "heat")
    y = random_partial_labels(rng, 30, 3, 14)
    block = SameClassBlock(y)
    outside = block.outside(W)
    assert sp.isspmatrix_csr(outside) and outside.has_sorted_indices
    labelled = y >= 0
    assert outside.toarray()[np.ix_(labelled, labelled)].max() == 0  # no entry inside the labelled block
    np.testing.assert_array_equal((outside + explicit_block(y)).toarray(), label_graph(W, y).toarray())
    # the degrees of W outside the block plus the block's are those of the label graph
    np.testing.assert_allclose(np.asarray(outside.sum(axis=1)).ravel() + block.degree(),
                               np.asarray(label_graph(W, y).sum(axis=1)).ravel(), rtol=1e-15)


def test_same_class_block_without_labels_is_empty(rng):
    W = knn_graph(rng.random((10, 3)), 3)
    block = SameClassBlock(np.full(10, -1))
    V = rng.random((2, 10, 3))
    assert block.n_labelled == 0 and block.n_edges == 0
    np.testing.assert_array_equal(block.dot(V), 0.0)
    np.testing.assert_array_equal(block.smoothness(V), [0.0, 0.0])
    assert block.smoothness(V[0]) == 0.0
    np.testing.assert_array_equal(block.degree(), 0.0)
    np.testing.assert_array_equal(block.outside(W).toarray(), W.toarray())
