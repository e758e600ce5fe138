"""tools/estimate_folds.py: the held-out estimate of one candidate on a file's folds, beside the truth."""

import numpy as np

from tools import estimate_folds


def test_every_score_is_a_share_and_well_separated_classes_come_back_right_every_way():
    rng = np.random.default_rng(0)
    y = np.repeat(np.arange(3), 8)
    X = np.abs(rng.random((3, 10))[y] * 4 + rng.normal(0, 0.05, (y.size, 10)))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    row = estimate_folds.one_file(X, y, 0, "sda", "nearest_labelled")
    scores = {key: value for key, value in row.items() if key != "draw"}
    assert set(scores) == {"truth", "one_fewer", "folds_2", "folds_3x2", "few_3x2", "extrapolated", "power_law",
                           "leave_one_out"}
    assert all(90.0 <= value <= 100.0 for value in scores.values()), scores
