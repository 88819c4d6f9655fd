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


def test_the_readme_states_the_measured_times_of_the_long_sessions():
    """``nox -s learning`` per backend and ``nox -s properties``: their minutes from a run in which each passed
    (``benchmarks/nox_times.py --out benchmarks/results/nox_times_long.json -- -s ...``)."""
    measured = json.loads((ROOT / "benchmarks" / "results" / "nox_times_long.json").read_text())
    sessions = {session["session"]: session for session in measured["sessions"]}
    minutes = {}
    for name in (
        "learning(backend='torch')",
        "learning(backend='tf')",
        "learning(backend='jax')",
        "properties",
    ):
        assert sessions[name]["passed"], f"{name} failed in the run the README would quote"
        minutes[name] = round(sessions[name]["seconds"] / 60)
    readme = " ".join((ROOT / "README.md").read_text().split())  # its sentences, across line breaks
    learning = ", ".join(
        f"{backend} {minutes[f'learning(backend={backend!r})']}" for backend in ("torch", "tf", "jax")
    )
    assert f"in minutes: {learning})" in readme, learning
    assert f"the deep property profile ({minutes['properties']} minutes)" in readme, minutes
