"""``python -m src.data``: help, one line for a misspelled name, the list of names when none is given."""

import subprocess
import sys

import pytest

from src.data import __main__ as cli

REPO = cli.CONF_DIR.parent


def refuse_to_fetch(monkeypatch):
    def fail(name, *args, **kwargs):
        raise AssertionError(f"fetched {name}")
    monkeypatch.setattr(cli, "load_named", fail)


def test_the_names_are_the_dataset_configs():
    names = cli.available()
    assert {"yale", "orl", "coil20"} <= set(names)
    assert set(names) == {p.stem for p in (cli.CONF_DIR / "dataset").glob("*.yaml")}
    assert "Yale" in names["yale"]


def test_misspelled_name_is_one_error_line_and_nothing_is_fetched(monkeypatch, caplog):
    refuse_to_fetch(monkeypatch)
    with caplog.at_level("ERROR"):
        assert cli.main(["yale", "yalee"]) == 2
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == 1 and "\n" not in errors[0]
    assert errors[0].startswith("dataset 'yalee' is not one of ") and "orl" in errors[0]
    assert "did you mean 'yale'" in errors[0]


def test_no_name_lists_what_can_be_fetched(monkeypatch, capsys):
    refuse_to_fetch(monkeypatch)
    assert cli.main([]) == 2
    out = capsys.readouterr().out
    assert "usage" in out and all(name in out for name in cli.available())
    assert cli.main(["--list"]) == 0
    assert capsys.readouterr().out.split() == list(cli.available())


def test_help_exits_zero_with_the_names(monkeypatch, capsys):
    refuse_to_fetch(monkeypatch)
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: python -m src.data") and "coil20" in out and "REPRO_DATA_MIRROR" in out


@pytest.mark.integration
def test_module_entry_point_has_no_traceback():
    for argv, status in ((["--help"], 0), (["yalee"], 2)):
        done = subprocess.run([sys.executable, "-m", "src.data", *argv], cwd=REPO, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == status
        assert "Traceback" not in done.stdout + done.stderr
    assert done.stderr.strip().count("\n") == 0 and done.stderr.startswith("[ERROR] dataset 'yalee'")
