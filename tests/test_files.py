"""src.files: atomic writes that leave no partial file and give the umask's mode, not mkstemp's 0600."""

import os
import stat

import pytest

from src.files import atomic_path, current_umask, make_readable, write_atomic


@pytest.fixture(params=[0o022, 0o002, 0o077])
def umask(request):
    old = os.umask(request.param)
    yield request.param
    os.umask(old)


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_current_umask_reads_without_changing_it(umask):
    assert current_umask() == umask
    assert current_umask() == umask


def test_written_files_get_the_mode_of_a_plain_open(tmp_path, umask):
    plain = tmp_path / "plain.txt"
    plain.write_text("x")  # what the user's umask gives an ordinary new file
    write_atomic(tmp_path / "text.csv", "a,b\n1,2\n")
    write_atomic(tmp_path / "bytes.bin", b"\x00\x01")
    with atomic_path(tmp_path / "figure.png", suffix=".png") as tmp:
        tmp.write_bytes(b"png")
    for name in ("text.csv", "bytes.bin", "figure.png"):
        assert mode(tmp_path / name) == mode(plain) == 0o666 & ~umask
    assert (tmp_path / "text.csv").read_text() == "a,b\n1,2\n"


def test_make_readable_resets_a_private_file(tmp_path, umask):
    path = tmp_path / "private"
    path.write_text("x")
    os.chmod(path, 0o600)
    make_readable(path)
    assert mode(path) == 0o666 & ~umask


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "results.csv"
    write_atomic(target, "old\n")
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_text("half")
            raise RuntimeError("killed")
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.csv"]
