"""The README's Python example runs as written, from a folder that is not the repository."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from conftest import REPO


def test_the_readme_python_example_runs(tmp_path):
    text = (REPO / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) == 1, "the README has one Python example"
    assert len(blocks[0].strip().splitlines()) <= 12, "the example stays short"
    script = tmp_path / "example.py"
    script.write_text(blocks[0])
    env = {**os.environ, "MBUTILS_CACHE": str(tmp_path / "cache"), "MBUTILS_JOBS": "1"}
    env.pop("MBUTILS_DATA", None)
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    assert "anchor_points(warm_start=False)" in out and "random" in out
    assert re.search(r"^\d+ of 224 seen items$", out, re.M), out[-500:]
