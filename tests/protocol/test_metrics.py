import itertools

import numpy as np
import pytest
from sklearn.metrics import normalized_mutual_info_score

from src.protocol import metrics
from src.protocol.metrics import accuracy, contingency, nmi


def brute_force_accuracy(y_true, y_pred):
    """Best accuracy over every one-to-one mapping of clusters to classes (small k only)."""
    classes, clusters = np.unique(y_true), np.unique(y_pred)
    best = 0
    for perm in itertools.permutations(classes, len(clusters)):
        mapping = dict(zip(clusters, perm))
        best = max(best, np.mean([mapping[c] == t for c, t in zip(y_pred, y_true)]))
    return best


def test_relabelled_perfect_clustering_scores_one():
    y = np.array([0, 0, 1, 1, 2, 2])
    assert accuracy(y, [2, 2, 0, 0, 1, 1]) == 1.0
    assert nmi(y, [5, 5, 3, 3, 9, 9]) == pytest.approx(1.0)


def test_hand_made_case():
    # classes 0,0,0,1,1,1; clusters a,a,b,b,b,b: best map a->0, b->1 gets 2 + 3 = 5 of 6
    y_true = [0, 0, 0, 1, 1, 1]
    y_pred = [7, 7, 8, 8, 8, 8]
    assert accuracy(y_true, y_pred) == pytest.approx(5 / 6)
    # MI by hand: p(a,0)=2/6, p(b,0)=1/6, p(b,1)=3/6; p(a)=2/6, p(b)=4/6, p(0)=p(1)=1/2
    mi = 2 / 6 * np.log((2 / 6) / (2 / 6 * 1 / 2)) + 1 / 6 * np.log((1 / 6) / (4 / 6 * 1 / 2)) \
        + 3 / 6 * np.log((3 / 6) / (4 / 6 * 1 / 2))
    h_true = np.log(2)
    h_pred = -(2 / 6 * np.log(2 / 6) + 4 / 6 * np.log(4 / 6))
    assert nmi(y_true, y_pred) == pytest.approx(mi / max(h_true, h_pred))


def test_independent_labelings_score_zero_nmi():
    assert nmi([0, 0, 1, 1], [0, 1, 0, 1]) == pytest.approx(0.0)


def max_normalized_mutual_information(y_true, y_pred):
    """Deng Cai's ``MutualInfo.m`` written out: I(C; C') / max(H(C), H(C')), 1 when both are one group."""
    p = contingency(y_true, y_pred) / len(y_true)
    rows, cols = p.sum(axis=1), p.sum(axis=0)
    nonzero = p > 0
    mutual = (p[nonzero] * np.log(p[nonzero] / np.outer(rows, cols)[nonzero])).sum()
    larger = max(-(rows * np.log(rows)).sum(), -(cols * np.log(cols)).sum())
    return 1.0 if larger == 0 else mutual / larger


def test_nmi_is_the_mutual_information_over_the_larger_entropy():
    rng = np.random.default_rng(7)
    for _ in range(200):
        n, k_true, k_pred = rng.integers(2, 300), rng.integers(1, 10), rng.integers(1, 10)
        y_true = rng.integers(0, k_true, size=n)
        y_pred = np.where(rng.random(n) < 0.6, y_true % k_pred, rng.integers(0, k_pred, size=n))
        assert nmi(y_true, y_pred) == pytest.approx(max_normalized_mutual_information(y_true, y_pred), abs=1e-12)


def test_nmi_edge_cases():
    assert nmi([0, 0, 0], [4, 4, 4]) == 1.0  # both labelings one group
    assert nmi([0, 0, 1, 1], [3, 3, 3, 3]) == 0.0  # one group tells nothing about two classes
    assert type(nmi([0, 1], [1, 0])) is float
    with pytest.raises(ValueError):
        nmi([0, 1, 2], [0, 1])


@pytest.mark.parametrize("seed", range(5))
def test_agrees_with_sklearn_and_brute_force(seed):
    rng = np.random.default_rng(seed)
    y_true = rng.integers(0, 4, size=40)
    y_pred = rng.integers(0, 4, size=40)
    assert nmi(y_true, y_pred) == pytest.approx(
        normalized_mutual_info_score(y_true, y_pred, average_method="max"), abs=1e-12)
    assert accuracy(y_true, y_pred) == pytest.approx(brute_force_accuracy(y_true, y_pred))


def test_max_normalization_differs_from_sklearn_default():
    y_true = [0, 0, 1, 1, 2, 2, 2, 2]
    y_pred = [0, 0, 0, 1, 1, 1, 1, 1]
    assert nmi(y_true, y_pred) != pytest.approx(normalized_mutual_info_score(y_true, y_pred))


def test_more_clusters_than_classes():
    assert accuracy([0, 0, 1, 1], [0, 1, 2, 3]) == pytest.approx(0.5)
    assert contingency([0, 0, 1], [2, 3, 3]).tolist() == [[1, 1], [0, 1]]


def rand_pairs(labels_true, labels_pred) -> float:
    """The adjusted Rand index counted pair by pair, apart from scikit-learn: agreements of every pair of
    samples, corrected by their expectation under fixed cluster sizes (Hubert and Arabie 1985)."""
    n = len(labels_true)
    same_true = [labels_true[i] == labels_true[j] for i in range(n) for j in range(i + 1, n)]
    same_pred = [labels_pred[i] == labels_pred[j] for i in range(n) for j in range(i + 1, n)]
    both = sum(a and b for a, b in zip(same_true, same_pred))
    pairs, a, b = len(same_true), sum(same_true), sum(same_pred)
    expected = a * b / pairs
    return (both - expected) / ((a + b) / 2 - expected)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ari_agrees_with_counting_pairs(seed):
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 3, 30)
    predicted = np.where(rng.random(30) < 0.6, truth, rng.integers(0, 4, 30))
    assert metrics.ari(truth, predicted) == pytest.approx(rand_pairs(list(truth), list(predicted)), abs=1e-12)
    assert metrics.ari(truth, (truth + 1) % 3) == pytest.approx(1.0)  # the classes under other names
