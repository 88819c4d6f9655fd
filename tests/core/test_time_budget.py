"""The test run's time budget (tests/conftest.py): a test over it is listed at the end unless a mark exempts it."""

from __future__ import annotations

from pathlib import Path

pytest_plugins = ["pytester"]

CONFTEST = Path(__file__).parents[1] / "conftest.py"


def test_a_test_over_the_budget_is_listed_unless_marked_learning_or_over_budget(pytester):
    pytester.makeconftest(CONFTEST.read_text().replace("BUDGET_SECONDS = 20.0", "BUDGET_SECONDS = 0.2"))
    pytester.makeini("[pytest]\nmarkers =\n    learning: long\n    over_budget(reason): why\n")
    pytester.makepyfile(
        """
        import time, pytest
        def test_slow():
            time.sleep(0.3)
        @pytest.mark.over_budget("it must run by default")
        def test_slow_but_said_why():
            time.sleep(0.3)
        @pytest.mark.learning
        def test_slow_learning():
            time.sleep(0.3)
        def test_quick():
            pass
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(
        ["*tests over the 0.2 s budget*", "*s  test_a_test_over_the_budget*::test_slow"]
    )
    listed = [line for line in result.stdout.lines if "::test_" in line]
    assert len(listed) == 1, result.stdout.lines
