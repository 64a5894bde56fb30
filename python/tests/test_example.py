"""The README's example runs."""

from __future__ import annotations

import pathlib
import subprocess
import sys

EXAMPLE = pathlib.Path(__file__).parent.parent / "examples" / "echo.py"


def test_the_echo_example_echoes():
    out = subprocess.run(
        [sys.executable, str(EXAMPLE), "--count", "5"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    assert out.count("bytes echoed") == 5, out
    assert "1000000 bytes echoed" in out, out
    assert out.endswith("5 RPCs echoed from Peer('10.0.0.2', '02:00:00:00:00:02', 99)\n"), out
