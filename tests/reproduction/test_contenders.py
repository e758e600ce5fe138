"""Your method and your data against the family: the homes, checks and limits (src/reproduction/contenders.py)."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from src.errors import ConfigError
from src.reproduction import contenders
from src.running.pool import plan_jobs

MODULE = "fixtures.outside.estimators"
FILE = Path(__file__).resolve().parents[1] / "fixtures" / "outside" / "estimators.py"


def test_params_are_read_as_yaml_values():
    assert contenders.parse_params(["beta=0.5", "init=nndsvd", "max_iter=30", "flag=true"]) == \
        {"beta": 0.5, "init": "nndsvd", "max_iter": 30, "flag": True}
    with pytest.raises(ConfigError, match="must be name=value"):
        contenders.parse_params(["beta"])


def test_an_import_path_resolves_to_its_class_name_and_the_tracks_follow_its_labels():
    plain = contenders.resolve(f"{MODULE}:PlainNMF", {"max_iter": 50})
    label = contenders.resolve(f"{FILE}:LabelNMF", {})
    assert (plain.label, plain.params, plain.config) == ("PlainNMF", {"max_iter": 50}, None)
    assert contenders.tracks_of(plain) == ["unsupervised", "labels10", "labels30"]
    assert contenders.tracks_of(label) == ["labels10", "labels30"]
    assert contenders.tracks_of(label, ["unsupervised", "labels30"]) == ["labels30"]


def test_a_method_config_with_target_in_the_users_config_dir(tmp_path):
    (tmp_path / "method").mkdir()
    (tmp_path / "method" / "mine.yaml").write_text(f"_target_: {MODULE}.PlainNMF\nlabel: Mine\nmax_iter: 40\n")
    found = contenders.resolve("mine", {"random_state": 3}, str(tmp_path))
    assert (found.name, found.label, dict(found.params), found.config) == \
        (f"{MODULE}.PlainNMF", "Mine", {"max_iter": 40, "random_state": 3}, "mine")
    with pytest.raises(ConfigError, match="no method config"):
        contenders.resolve("theirs", {}, str(tmp_path))
    with pytest.raises(ConfigError, match="one of the family's methods"):
        contenders.resolve("nmf", {}, str(tmp_path))


def test_the_sweeps_compose_to_the_contenders_jobs_alone(tmp_path):
    (tmp_path / "conf" / "method").mkdir(parents=True)
    (tmp_path / "conf" / "method" / "mine.yaml").write_text(f"_target_: {MODULE}.PlainNMF\nlabel: Mine\n")
    chosen = [contenders.resolve(f"{FILE}:LabelNMF", {"max_iter": 30}),
              contenders.resolve("mine", {}, str(tmp_path / "conf"))]
    homes = contenders.contender_homes(chosen, list(contenders.TRACKS), ["orl", "yale"], tmp_path / "out",
                                       str(tmp_path / "conf"))
    assert [home.name for home in homes] == list(contenders.TRACKS)
    jobs = plan_jobs(homes, [])
    found = sorted((job.paper, job.spec.dataset.name, job.spec.method.label) for job in jobs)
    assert found == sorted([("unsupervised", d, "Mine") for d in ("orl", "yale")]
                           + [(t, d, m) for t in ("labels10", "labels30") for d in ("orl", "yale")
                              for m in ("LabelNMF", "Mine")])
    label_job = next(job for job in jobs if job.spec.method.label == "LabelNMF")
    assert label_job.spec.method.name == f"{FILE}:LabelNMF" and dict(label_job.spec.method.params) == {"max_iter": 30}
    assert label_job.out_dir.parent == tmp_path / "out" / label_job.paper / "runs"
    assert label_job.spec.protocol.ks == tuple(range(2, 11)) and label_job.spec.seed == 0


def test_your_data_runs_every_family_method_and_the_references_at_k_up_to_its_classes(tmp_path):
    homes = contenders.family_homes(["labels10"], contenders.user_data_overrides(str(tmp_path / "mine.npz"), 4),
                                    tmp_path / "out")
    jobs = plan_jobs(homes, [])
    assert len(jobs) == 18 + 2 and {job.spec.dataset.name for job in jobs} == {"mine"}
    assert {"label_spreading", "knn"} <= {job.spec.method.name for job in jobs}
    assert {job.spec.protocol.ks for job in jobs} == {(2, 3, 4)}


def test_a_data_set_too_small_for_the_protocol_is_refused_on_one_line():
    assert contenders.check_user_data(np.repeat([0, 1, 2], 5), "mine.npz") == 3
    with pytest.raises(ConfigError, match="1 class"):
        contenders.check_user_data(np.zeros(10), "mine.npz")
    with pytest.raises(ConfigError, match="class 2 has 1 sample"):
        contenders.check_user_data(np.array([0, 0, 1, 1, 2]), "mine.npz")


def test_mismatched_digests_and_time_limits_come_from_the_shipped_cells():
    shipped = pd.DataFrame({"dataset": ["orl", "orl", "yale"], "data_sha256": ["a", "a", "b"],
                            "fit_seconds": [1.0, 9.0, 0.1], "kmeans_seconds": [0.5, 1.0, 0.1]})
    assert contenders.mismatched(shipped, {"orl": "a", "yale": "c"}) == {"yale": ("b", "c")}
    assert contenders.time_limits(shipped) == {"orl": 100.0, "yale": contenders.MIN_LIMIT}
