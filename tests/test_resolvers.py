"""src.resolvers: the values the configs compute, each against what it must give, and their registration.

The default data directory (a checkout's data/, an installed copy's user cache, the user's own always
winning), names a shell takes unquoted, and that one call registers every resolver that conf/ uses.
"""

import re
import sys
from pathlib import Path

import pooch
import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from src import config_dir, resolvers
from src.resolvers import default_data_dir

REPO = Path(__file__).resolve().parents[1]
SHELL_SAFE = re.compile(r"^[A-Za-z0-9._=,+-]+$")


def test_every_resolver_that_conf_uses_is_registered():
    used = set()
    for path in (REPO / "conf").rglob("*.yaml"):
        used |= set(re.findall(r"\$\{([a-z_]+):", path.read_text()))
    assert used - {"now"} == set(resolvers.RESOLVERS)  # ${now:...} is Hydra's own
    resolvers.register()
    assert all(OmegaConf.has_resolver(name) for name in resolvers.RESOLVERS)


def composed_paths(*overrides):
    with initialize_config_dir(str(REPO / "conf"), version_base="1.3"):
        return compose("config", overrides=list(overrides)).paths


def test_this_checkout_is_recognised():
    assert config_dir.CHECKOUT == REPO and config_dir.CONF_DIR == REPO / "conf"


def test_a_checkout_keeps_its_data_under_the_working_directory(monkeypatch, tmp_path):
    monkeypatch.setattr(config_dir, "CHECKOUT", tmp_path / "checkout")
    assert default_data_dir() == "data"
    assert composed_paths().data_dir == "data"


def test_an_installed_copy_keeps_its_data_in_the_users_cache(monkeypatch, tmp_path):
    monkeypatch.setattr(config_dir, "CHECKOUT", None)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    expected = str(pooch.os_cache("repro-mf"))
    assert default_data_dir() == expected and Path(expected).is_absolute()
    if sys.platform.startswith("linux"):
        assert expected == str(tmp_path / "cache" / "repro-mf")
    assert composed_paths().data_dir == expected


@pytest.mark.parametrize("checkout", [True, False])
def test_a_data_dir_given_by_the_user_always_wins(monkeypatch, tmp_path, checkout):
    monkeypatch.setattr(config_dir, "CHECKOUT", tmp_path if checkout else None)
    assert composed_paths(f"paths.data_dir={tmp_path / 'mine'}").data_dir == str(tmp_path / "mine")



NASTY = ["FNMF(farness=0.001)", "SemiGNMF(alpha=100)", "PCGNMF(alpha=1,beta=10)", "GNMF(alpha=100.0)",
         "my method [v2]", "it's \"quoted\"", "a/b\\c", "-rf", "--help", ".hidden", "..", "=ls", "~user",
         "$HOME", "`id`", "a;b&&c|d", "star*?", "{a,b}", "tab\there", "new\nline", "Café λ=0.3", "()", "",
         "  ", "#comment", "!bang", "percent%", "<in>out", "x" * 3, "NMF-KL", "COP-KMeans", 42, 0.001]


@pytest.mark.parametrize("label", NASTY)
def test_safe_name_gives_a_name_a_shell_takes_unquoted(label):
    name = resolvers.safe_name(label)
    assert SHELL_SAFE.match(name), name
    assert not name.startswith(("-", ".", "=", "+", ","))
    assert resolvers.safe_name(name) == name  # a safe name stays as it is


def test_safe_name_keeps_the_labels_readable_and_is_a_config_resolver():
    assert resolvers.safe_name("FNMF(farness=0.001)") == "FNMF-farness=0.001"
    assert resolvers.safe_name("PCGNMF(alpha=1,beta=10)") == "PCGNMF-alpha=1,beta=10"
    assert resolvers.safe_name("my method [v2]") == "my-method-v2"
    assert resolvers.safe_name("Café") == "Cafe" and resolvers.safe_name("()") == "unnamed"
    assert [resolvers.safe_name(label) for label in ("NMF", "NMF-KL", "COP-KMeans")] == ["NMF", "NMF-KL", "COP-KMeans"]
    resolvers.register()
    resolvers.register()  # twice: no error
    config = OmegaConf.create({"label": "SemiGNMF(alpha=${alpha})", "alpha": 100,
                               "subdir": "yale_${safe_name:${label}}"})
    assert config.subdir == "yale_SemiGNMF-alpha=100"


