"""src.data.fetch: the progress bar of a download (on a terminal only, erased at its end so that an error stays on one line).

Nothing here touches the network: ``requests.get``, which pooch's HTTP downloader calls, is replaced by a
response that streams a few chunks (and can fail half-way).
"""

import hashlib
import io
import sys
from pathlib import Path

import pytest
import requests

import src.data.fetch as fetch_mod
from src.data.fetch import REGISTRY, RawFile, fetch
from src.errors import DataError

REPO = Path(__file__).resolve().parents[2]
PAYLOAD = b"0123456789" * 1000
URL = "https://example.org/files/blob.bin?download=1"


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
