"""`course hub start` refuses what cannot work, with a clear message and no side effects.

(A hub that really starts, and a second start refused while the first keeps serving, are
in tests/test_hub_browser.py.)
"""
from __future__ import annotations

import os
import socket

import pytest

from course.cli import main


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start(capsys, tmp_path, *extra: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["hub", "start", "--state-dir", str(tmp_path / "state"),
                 "--exchange", str(tmp_path / "exchange"), "--port", str(free_port()),
                 "--proxy", "/bin/true", *extra])
    return code, capsys.readouterr().err


def test_root_cannot_be_the_instructor(capsys, tmp_path):
    if os.geteuid() != 0:
        pytest.fail("`course hub start` runs as root; so does this test (CI runs as root)")
    code, err = start(capsys, tmp_path, "--instructor", "root")
    assert code == 1
    assert "the instructor must be an ordinary Unix user, not root" in err
    assert not (tmp_path / "state").exists() and not (tmp_path / "exchange").exists()


def test_an_unknown_instructor_is_named(capsys, tmp_path):
    if os.geteuid() != 0:
        pytest.fail("`course hub start` runs as root; so does this test (CI runs as root)")
    code, err = start(capsys, tmp_path, "--instructor", "nobody-of-this-course")
    assert code == 1
    assert "the instructor 'nobody-of-this-course' is not a Unix user" in err
    assert not (tmp_path / "state").exists()


def test_a_busy_port_is_refused(capsys, tmp_path):
    if os.geteuid() != 0:
        pytest.fail("`course hub start` runs as root; so does this test (CI runs as root)")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        capsys.readouterr()
        code = main(["hub", "start", "--state-dir", str(tmp_path / "state"),
                     "--exchange", str(tmp_path / "exchange"), "--port", str(port),
                     "--instructor", "root"])
        err = capsys.readouterr().err
    assert code == 1
    assert f"port {port} on 127.0.0.1 is already in use by another program" in err
    assert not (tmp_path / "state").exists()
