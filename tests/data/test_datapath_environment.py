"""Importing mbutils leaves the environment as it found it (mbutils.data.datapath): a relative MBUTILS_DATA entry
still means a folder of the directory the package was imported in, and a child process is given it absolute."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from conftest import REPO

SCRIPT = textwrap.dedent("""
    import json, os, sys
    before = dict(os.environ)
    import mbutils
    from mbutils.data import datapath
    after = dict(os.environ)
    os.chdir(sys.argv[1])  # later working directories do not change what the entry means
    print(json.dumps({"changed": sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k)),
                      "folders": [str(f.path) for f in datapath.data_folders()],
                      "child": datapath.data_environment()}))
""")


def test_importing_mbutils_leaves_the_environment_unchanged(tmp_path):
    (tmp_path / "here").mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**os.environ, "MBUTILS_DATA": os.pathsep.join(["here", "nowhere"])}
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(elsewhere)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen["changed"] == [], f"import mbutils changed the environment: {seen['changed']}"
    here, nowhere = str((tmp_path / "here").resolve()), str((tmp_path / "nowhere").resolve())
    assert seen["folders"][:2] == [here, nowhere]  # the reader's folders first, then the repository's data/
    assert seen["folders"][-1] == str((REPO / "data").resolve())
    assert seen["child"] == {"MBUTILS_DATA": os.pathsep.join([here, nowhere])}
