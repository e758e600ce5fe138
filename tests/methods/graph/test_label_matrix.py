"""Tests of the label constraint matrix A (src.methods.graph.label_matrix), the CNMF and CCF papers' example."""

import numpy as np
import pytest
import scipy.sparse as sp

from src.errors import ConfigError
from src.methods.graph.label_matrix import label_matrix, n_constraint_columns


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
