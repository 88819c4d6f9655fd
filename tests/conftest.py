"""Every test session's time budget: a test that takes more than :data:`BUDGET_SECONDS` (its set-up, call and
tear-down) is marked ``learning`` (a long run: one representative case stays in the default sessions, as
``ci_backend`` keeps one backend's), or marked ``over_budget`` with the reason it must run by default. The test
run lists the others at its end, with their seconds, so that a slow test is seen where it is added."""

from __future__ import annotations

from collections import defaultdict

import pytest

#: Seconds a test may take by default, on a quiet 2-core machine running two tests at a time.
BUDGET_SECONDS = 20.0

_seconds: defaultdict[str, float] = defaultdict(float)
_exempt: set[str] = set()


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Add up each test's phases (in the process that reports them: pytest-xdist's controller too)."""
    _seconds[report.nodeid] += report.duration
    if "learning" in report.keywords or "over_budget" in report.keywords:
        _exempt.add(report.nodeid)


def over_budget() -> list[tuple[str, float]]:
    """The tests over the budget that no mark exempts, slowest first."""
    slow = [(test, seconds) for test, seconds in _seconds.items() if seconds > BUDGET_SECONDS]
    return sorted(((test, s) for test, s in slow if test not in _exempt), key=lambda item: -item[1])


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    slow = over_budget()
    if slow:
        terminalreporter.section(f"tests over the {BUDGET_SECONDS:g} s budget")
        terminalreporter.line(
            "mark each learning (a long run) or over_budget(reason) (why it runs by default): tests/conftest.py"
        )
        for test, seconds in slow:
            terminalreporter.line(f"{seconds:6.1f} s  {test}")
