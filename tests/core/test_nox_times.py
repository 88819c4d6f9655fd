"""benchmarks/nox_times.py reads a stamped nox log into each session's seconds, slowest tests and disk peak."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

LOG = """\
[     0.0] nox > Running session core
[     0.5] nox > python -m pip install ...
[    10.0] nox > pytest tests/core -q --durations=0
[    12.0] 1.50s call     tests/core/test_a.py::test_one
[    12.1] 0.50s setup    tests/core/test_a.py::test_one
[    12.2] 0.25s call     tests/core/test_b.py::test_two
[    12.3]     21.0 s  tests/core/test_a.py::test_slow
[    40.0] nox > Session core was successful in 40 seconds.
[    40.5] nox > Running session docs
[    45.0] nox > mkdocs build --strict
[    50.0] nox > Session docs failed.
[    51.0] disk peak: 7.25 GB
"""


def load_nox_times():
    spec = importlib.util.spec_from_file_location("nox_times", ROOT / "benchmarks" / "nox_times.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_stamped_log_gives_each_sessions_install_and_test_seconds_and_the_disk_peak(tmp_path, monkeypatch):
    log, out = tmp_path / "nox.log", tmp_path / "nox_times.json"
    log.write_text(LOG)
    monkeypatch.setattr(sys, "argv", ["nox_times.py", "--log", str(log), "--out", str(out), "--top", "1"])
    load_nox_times().main()
    results = json.loads(out.read_text())
    core, docs = results["sessions"]
    assert (core["session"], core["install_seconds"], core["test_seconds"]) == ("core", 10.0, 30.0)
    assert (core["passed"], docs["passed"]) == (True, False)
    assert core["slowest_tests"] == [["tests/core/test_a.py::test_one", 2.0]]
    assert core["slowest_modules"] == [["tests/core/test_a.py", 2.0]]
    assert core["over_budget"] == {"tests/core/test_a.py::test_slow": 21.0}
    # the disk peak line ends no session
    assert (docs["install_seconds"], docs["test_seconds"], docs["seconds"]) == (4.5, 5.0, 9.5)
    assert results["seconds"] == 49.5 and results["disk_peak_gb"] == 7.25
