"""The README's time of its test command is the one benchmarks/nox_times.py measured last."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_readme_states_the_measured_time_of_nox():
    measured = json.loads((ROOT / "benchmarks" / "results" / "nox_times.json").read_text())
    minutes = round(measured["seconds"] / 60)
    readme = (ROOT / "README.md").read_text()
    assert f"every test session: about {minutes} minutes on 2 cores" in readme, minutes
    assert f"2-core machine: {minutes} minutes)" in readme
