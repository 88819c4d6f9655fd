"""The compile clock a compiling backend keeps per API method: seconds added up, a slow compile
announced while it runs (and its end), a quick one not, and no timer where nobody listens."""

from __future__ import annotations

import logging
import threading
import time

import pytest

from rlgraph.graph import compiling
from rlgraph.graph.compiling import CompileClock


def test_a_compile_longer_than_the_notice_time_is_announced_while_it_runs(caplog, monkeypatch):
    monkeypatch.setattr(compiling, "NOTICE_SECONDS", 0.05)
    clock = CompileClock("update", "XLA", cache="/tmp/cache")
    with caplog.at_level(logging.INFO, logger=compiling.LOGGER):
        clock.start()
        clock.start()  # already under way: one compile
        time.sleep(0.3)
        announced = [record.getMessage() for record in caplog.records]  # before the compile ends
        seconds = clock.stop()
    assert announced == [
        "rlgraph: compiling 'update' on XLA (its first call with these input shapes; this takes a while once)..."
    ]
    assert caplog.records[-1].getMessage() == (
        f"rlgraph: compiled 'update' in {seconds:.1f} s; kept in /tmp/cache for later runs."
    )
    assert seconds >= 0.3 and clock.seconds == seconds and clock.compiles == 1
    assert clock.stop() == 0.0 and clock.compiles == 1  # none under way


def test_quick_compiles_add_up_quietly(caplog, monkeypatch):
    monkeypatch.setattr(compiling, "NOTICE_SECONDS", 60.0)
    clock = CompileClock("act", "XLA")
    with caplog.at_level(logging.INFO, logger=compiling.LOGGER):
        for _ in range(2):
            clock.start()
            time.sleep(0.02)
            clock.stop()
    assert not caplog.records
    assert clock.compiles == 2 and clock.seconds == pytest.approx(0.04, abs=0.03)
    assert not clock.running


def test_no_timer_thread_where_the_notices_would_be_dropped(caplog, monkeypatch):
    monkeypatch.setattr(compiling, "NOTICE_SECONDS", 0.0)
    caplog.set_level(logging.WARNING, logger=compiling.LOGGER)  # as by default
    before = threading.active_count()
    clock = CompileClock("act", "XLA")
    clock.start()
    assert threading.active_count() == before and clock.running
    assert clock.stop() >= 0.0 and clock.compiles == 1
