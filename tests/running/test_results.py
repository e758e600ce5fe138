"""src.running.results: settings as columns, and no merging of one label computed under two settings or codes."""

import pandas as pd
import pytest

from src.running.results import MixedResultsError, read_file, read_results, setting_columns


def rows(method="GNMF", alpha=10.0, config_hash="aaaa", code="c0de", ks=(2, 3)):
    return pd.DataFrame([{"dataset": "yale", "method": method, "estimator": "gnmf", "k": k, "trial": t,
                          "acc": 0.5 + 0.01 * k, "param_alpha": alpha, "config_hash": config_hash,
                          "code_fingerprint": code} for k in ks for t in range(2)])


def write(frame, path):
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, index=False)
    return path


def test_one_label_under_two_parameter_settings_is_refused_naming_both_files(tmp_path):
    first = write(rows(alpha=10.0, config_hash="aaaa"), tmp_path / "a" / "results.csv")
    second = write(rows(alpha=100.0, config_hash="bbbb", ks=(4,)), tmp_path / "b" / "results.csv")
    with pytest.raises(MixedResultsError) as info:
        read_results([first, second])
    message = str(info.value)
    assert "\n" not in message and "yale/GNMF" in message
    assert str(first) in message and str(second) in message


def test_one_label_from_two_versions_of_the_code_is_refused(tmp_path):
    first = write(rows(code="c0de"), tmp_path / "a" / "results.csv")
    second = write(rows(code="beef", ks=(4,)), tmp_path / "b" / "results.csv")
    with pytest.raises(MixedResultsError, match="code"):
        read_results([first, second])


def test_rows_without_identity_columns_do_not_merge_with_recorded_ones(tmp_path):
    old = write(rows().drop(columns=["config_hash", "code_fingerprint"]), tmp_path / "old" / "results.csv")
    new = write(rows(ks=(4,)), tmp_path / "new" / "results.csv")
    with pytest.raises(MixedResultsError):
        read_results([old, new])


def test_same_settings_merge_and_different_labels_stay_apart(tmp_path):
    files = [write(rows(ks=(2, 3)), tmp_path / "a" / "results.csv"),
             write(rows(ks=(3, 4)), tmp_path / "b" / "results.csv"),  # k = 3 twice: the same cells
             write(rows(method="GNMF(alpha=100)", alpha=100.0, config_hash="bbbb"), tmp_path / "c" / "results.csv")]
    frame = read_results(files)
    gnmf = frame[frame["method"] == "GNMF"]
    assert sorted(gnmf["k"].unique()) == [2, 3, 4] and len(gnmf) == 6
    assert len(frame[frame["method"] == "GNMF(alpha=100)"]) == 4
    assert "_source" not in frame


def test_a_file_is_read_again_when_it_changes_and_each_read_is_the_callers_own(tmp_path):
    path = write(rows(ks=(2,)), tmp_path / "a" / "results.csv")
    first = read_file(path)
    first["acc"] = -1.0  # the caller's copy: the next read does not see it
    assert (read_file(path)["acc"] > 0).all()
    write(rows(ks=(2, 3, 4)), path)  # rewritten: another size
    assert read_file(path)["k"].tolist() == [2, 2, 3, 3, 4, 4]
    assert len(read_results([path])) == 6


def test_setting_columns_flatten_dataset_method_and_protocol():
    settings = {"dataset": {"name": "yale", "loader": "deng_cai", "preprocess": "unit_norm"},
                "method": {"name": "gnmf", "label": "GNMF", "params": {"alpha": 10.0, "weight": "binary"}},
                "protocol": {"rank_offset": 1, "labels": {"mode": "fraction", "fraction": 0.3}, "grid": [1, 2]},
                "seed": 0}
    assert setting_columns(settings) == {
        "dataset_loader": "deng_cai", "dataset_preprocess": "unit_norm", "param_alpha": 10.0,
        "param_weight": "binary", "protocol_rank_offset": 1, "protocol_labels_mode": "fraction",
        "protocol_labels_fraction": 0.3, "protocol_grid": "[1, 2]"}
