"""src.data.fetch: where the data go by default (a checkout's data/, an installed copy's user cache) and the
progress bar of a download (on a terminal only, erased at its end so that an error stays on one line).

Nothing here touches the network: ``requests.get``, which pooch's HTTP downloader calls, is replaced by a
response that streams a few chunks (and can fail half-way).
"""

import hashlib
import io
import sys
from pathlib import Path

import pooch
import pytest
import requests
from hydra import compose, initialize_config_dir

import src.data.fetch as fetch_mod
from src import config_dir
from src.data.fetch import REGISTRY, RawFile, default_data_dir, fetch
from src.errors import DataError

REPO = Path(__file__).resolve().parents[2]
PAYLOAD = b"0123456789" * 1000
URL = "https://example.org/files/blob.bin?download=1"


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


class Terminal(io.StringIO):
    """Standard error as a terminal."""

    def isatty(self):
        return True


class Response:
    """What ``requests.get`` returns for :data:`PAYLOAD`, streamed in chunks; ``fail_after`` chunks then an error."""

    def __init__(self, fail_after=None):
        self.headers = {"content-length": str(len(PAYLOAD))}
        self.fail_after = fail_after

    def raise_for_status(self):
        pass

    def iter_content(self, chunk_size):
        for number, start in enumerate(range(0, len(PAYLOAD), chunk_size)):
            if number == self.fail_after:
                raise requests.exceptions.ChunkedEncodingError("Connection broken: IncompleteRead")
            yield PAYLOAD[start:start + chunk_size]


@pytest.fixture
def blob(monkeypatch):
    """A registry entry downloaded from :data:`URL`; returns the downloads' progress bars."""
    monkeypatch.setitem(REGISTRY, "blob.bin", RawFile("blob.bin", (f"sha256:{hashlib.sha256(PAYLOAD).hexdigest()}",),
                                                      URL))
    monkeypatch.delenv("REPRO_DATA_MIRROR", raising=False)
    bars = []
    real = fetch_mod._progress_bar

    def recorded(url):
        bar = real(url)
        bars.append(bar)
        return bar

    monkeypatch.setattr(fetch_mod, "_progress_bar", recorded)
    return bars


def test_a_download_on_a_terminal_shows_a_progress_bar_and_erases_it(blob, monkeypatch, tmp_path):
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.setattr(requests, "get", lambda url, **kwargs: Response())
    path = fetch("blob.bin", tmp_path, None)
    assert path.read_bytes() == PAYLOAD
    bar, = blob
    assert bar.desc == "blob.bin" and bar.total == len(PAYLOAD) and bar.disable  # disable: closed
    shown = terminal.getvalue()
    assert "blob.bin" in shown and "9.77k" in shown  # the name and the size (KiB) were drawn
    assert shown.endswith("\r")  # leave=False: the line was cleared at the end


def test_a_download_without_a_terminal_shows_no_bar(blob, monkeypatch, tmp_path):
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    monkeypatch.setattr(requests, "get", lambda url, **kwargs: Response())
    assert fetch("blob.bin", tmp_path, None).read_bytes() == PAYLOAD
    assert blob == [None] and sys.stderr.getvalue() == ""


def test_a_download_failing_half_way_erases_its_bar_and_is_one_line(blob, monkeypatch, tmp_path):
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.setattr(requests, "get", lambda url, **kwargs: Response(fail_after=3))
    with pytest.raises(DataError) as info:
        fetch("blob.bin", tmp_path, None)
    message = str(info.value)
    assert "\n" not in message and "blob.bin" in message and "ChunkedEncodingError" in message
    bar, = blob
    assert bar.disable and 0 < bar.n < len(PAYLOAD)  # closed half-way
    assert terminal.getvalue().endswith("\r")  # the bar's line is cleared: the error starts a line of its own
    assert not (tmp_path / "raw" / "blob.bin").exists()
