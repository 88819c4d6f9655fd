"""Where the README's test command spends its time: each nox session's install and test seconds, its slowest
tests and test modules, and the tests over the per-test budget (tests/conftest.py).

Run: ``python benchmarks/nox_times.py`` (the whole ``nox``, as CI runs it: the README gives its minutes; run it on
a clean clone, whose sessions install from nothing), ``python benchmarks/nox_times.py -- -s core tf`` (some
sessions), or ``--log FILE`` to read a log this script wrote before. It writes the log beside the results,
``benchmarks/results/nox_times.json`` (``--out``), and prints the table; each session says whether it passed.
The long sessions the README times go to their own file: ``--out benchmarks/results/nox_times_long.json -- -s
learning``.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "nox_times.json"
#: A session's test phase starts at its first command that is not an install.
TEST_COMMANDS = re.compile(r"nox > (pytest|mypy|mkdocs|rlgraph|ruff|bash)\b")
DURATION = re.compile(r"([\d.]+)s (setup|call|teardown)\s+(\S+)")
#: How nox ends a session: ``was successful`` or ``failed`` (None where the log ends before).
ENDED = re.compile(r"nox > Session \S+ (was successful|failed)")
OVER_BUDGET = re.compile(r"^\s*([\d.]+) s  (\S+::\S+)$")


def run_nox(arguments: list[str], log: Path, keep_venvs: bool) -> None:
    """``nox`` with ``arguments`` (``--durations=0`` for its tests), each line stamped with its second; as
    .ci/run runs it (each session's venv deleted when it ends) unless ``keep_venvs``. The log's last line is
    the most disk the run held at once, above what was in use when it started."""
    command = ["nox", *arguments, "--", "--durations=0"]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}  # each line as it is printed, so that its stamp is its own
    if not keep_venvs:
        env["RLGRAPH_NOX_DISCARD_VENVS"] = "1"
    start, disk = time.monotonic(), DiskPeak()
    with subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
    ) as nox:
        assert nox.stdout is not None
        with log.open("w") as out:
            for line in nox.stdout:
                out.write(f"[{time.monotonic() - start:8.1f}] {line}")
                out.flush()
            out.write(f"[{time.monotonic() - start:8.1f}] disk peak: {disk.stop():.2f} GB\n")
    if nox.returncode:
        sys.exit(f"nox failed (exit code {nox.returncode}); its log: {log}")


class DiskPeak:
    """The most of the repository's file system in use at once, above its use when made (sampled each 2 s)."""

    def __init__(self) -> None:
        self._base = self._peak = shutil.disk_usage(ROOT).used
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._done.wait(2.0):
            self._peak = max(self._peak, shutil.disk_usage(ROOT).used)

    def stop(self) -> float:
        """Stop sampling; the peak in GB above the start."""
        self._done.set()
        self._thread.join()
        return (self._peak - self._base) / 1e9


def sessions_of(log: Path, top: int) -> list[dict[str, Any]]:
    """Each session of a stamped log: its seconds, slowest tests and modules, and its tests over budget."""
    sessions: list[dict[str, Any]] = []
    for line in log.read_text().splitlines():
        if line.endswith(" GB") and "] disk peak: " in line:
            continue
        stamped = re.match(r"\[\s*([\d.]+)\] (.*)", line)
        if stamped is None:
            continue
        second, text = float(stamped.group(1)), stamped.group(2)
        if started := re.match(r"nox > Running session (\S+)", text):
            sessions.append(
                {"name": started.group(1), "start": second, "tests_from": None, "end": second, "passed": None}
            )
            sessions[-1].update(durations=collections.Counter(), over_budget={})
            continue
        if not sessions:
            continue
        session = sessions[-1]
        session["end"] = second
        if session["tests_from"] is None and TEST_COMMANDS.match(text):
            session["tests_from"] = second
        if ended := ENDED.match(text):
            session["passed"] = ended.group(1) == "was successful"
        if duration := DURATION.match(text):
            session["durations"][duration.group(3)] += float(duration.group(1))
        if over := OVER_BUDGET.match(text):
            session["over_budget"][over.group(2)] = float(over.group(1))
    return [_summary(session, top) for session in sessions]


def _summary(session: dict[str, Any], top: int) -> dict[str, Any]:
    tests_from = session["tests_from"] or session["end"]
    durations: collections.Counter[str] = session["durations"]
    modules: collections.Counter[str] = collections.Counter()
    for test, seconds in durations.items():
        modules[test.split("::")[0]] += seconds
    return {
        "session": session["name"],
        "passed": session["passed"],
        "install_seconds": round(tests_from - session["start"], 1),
        "test_seconds": round(session["end"] - tests_from, 1),
        "seconds": round(session["end"] - session["start"], 1),
        "tests_timed": len(durations),
        "test_seconds_summed": round(sum(durations.values()), 1),
        "slowest_tests": [[test, round(s, 1)] for test, s in durations.most_common(top)],
        "slowest_modules": [[module, round(s, 1)] for module, s in modules.most_common(top)],
        "over_budget": session["over_budget"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--log", type=Path, help="read this stamped log instead of running nox")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--top", type=int, default=30, help="slowest tests and modules kept per session")
    parser.add_argument("--keep-venvs", action="store_true", help="keep each session's venv (not as CI)")
    parser.add_argument("nox_arguments", nargs="*", help="after --: nox's own arguments (-s core tf)")
    args = parser.parse_args()
    log = args.log or args.out.with_suffix(".log")
    if args.log is None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        run_nox(args.nox_arguments, log, args.keep_venvs)
    sessions = sessions_of(log, args.top)
    total = round(sum(session["seconds"] for session in sessions), 1)
    peak = re.search(r"\] disk peak: ([\d.]+) GB$", log.read_text(), re.MULTILINE)
    disk = float(peak.group(1)) if peak else None
    results = {"seconds": total, "disk_peak_gb": disk, "sessions": sessions}
    args.out.write_text(json.dumps(results, indent=1) + "\n")
    for session in sessions:
        ending = {True: "", False: "  FAILED", None: "  unfinished"}[session["passed"]]
        print(
            f"{session['session']:40s} install {session['install_seconds']:6.0f} s  tests "
            f"{session['test_seconds']:6.0f} s  {len(session['over_budget'])} over budget{ending}"
        )
    print(f"{'all':40s} {total:.0f} s ({total / 60:.1f} minutes), disk peak {disk} GB; {args.out}")


if __name__ == "__main__":
    main()
