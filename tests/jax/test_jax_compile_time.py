"""Compile time on JAX: a chain of API methods compiles each method on its own (a new number of
records recompiles only the method taking them), a slow compile is announced while it runs, the
seconds spent compiling reach the run's summary, and a second process loads the programs from the
compilation cache instead of compiling them."""

from __future__ import annotations

import io
import json
import logging
import os
import subprocess
import sys
import time

import numpy as np
import pytest

pytest.importorskip("jax")

import rlgraph
from rlgraph.components import Component
from rlgraph.graph import compiling
from rlgraph.graph.built_graph import BuiltGraph
from rlgraph.spaces import FloatBox
from rlgraph.testing import ComponentTest


class Tally(Component):
    """Rows added up (a method taking a batch of any size), and the sum read back (one of no inputs)."""

    def __init__(self):
        super().__init__(scope="tally")

    def create_variables(self, input_spaces, action_space=None):
        self.total = self.get_variable("total", shape=(2,), initializer=0.0, trainable=False)

    @rlgraph.graph_fn(api=True)
    def add(self, rows):
        self.ops.assign(self.total, self.total + self.ops.sum(rows, axis=0))

    @rlgraph.graph_fn(api=True)
    def doubled(self):
        return self.ops.read(self.total) * 2.0


class Slow(Component):
    """An API method whose Python function takes a while each time it runs: only when traced."""

    def __init__(self, seconds):
        super().__init__(scope="slow")
        self.seconds = seconds

    @rlgraph.graph_fn(api=True)
    def slow(self, x):
        time.sleep(self.seconds)
        return x + 1.0

    @rlgraph.graph_fn(api=True)
    def quick(self, x):
        return x * 2.0


X = {"x": FloatBox(shape=(2,), add_batch_rank=True)}


def test_a_chain_runs_each_method_as_its_own_program_so_a_new_batch_size_compiles_only_its_own():
    graph = BuiltGraph(Tally(), {"rows": FloatBox(shape=(2,), add_batch_rank=True)}, backend="jax")
    graph.build()
    expected = np.zeros(2)
    for count in (3, 5, 7, 5):
        rows = np.arange(2 * count, dtype=np.float32).reshape(count, 2)
        expected += rows.sum(axis=0)
        doubled = graph.execute_chain([("add", (rows,), False), ("doubled", (), False)])
        np.testing.assert_allclose(doubled, 2 * expected)
    assert list(graph._chains) == [("add", "doubled")]
    assert graph._functions["add"].trace_count == 3  # once per number of rows
    assert graph._functions["doubled"].trace_count == 1  # not again for each of them


def test_a_slow_compile_is_announced_while_it_runs_and_its_seconds_are_counted(caplog, monkeypatch):
    monkeypatch.setattr(compiling, "NOTICE_SECONDS", 0.05)
    test = ComponentTest(Slow(0.3), X, backend="jax")
    x = np.ones((2, 2), np.float32)
    with caplog.at_level(logging.INFO, logger=compiling.LOGGER):
        np.testing.assert_allclose(test.test(("slow", x)), x + 1.0)
        notices = [record.getMessage() for record in caplog.records]
        assert len(notices) == 2
        assert notices[0].startswith("rlgraph: compiling 'slow' on JAX (its first call")
        assert notices[1].startswith("rlgraph: compiled 'slow' in ")
        method = test.graph._functions["slow"]
        assert method.compile_seconds >= 0.6  # traced twice: abstractly first, then for jax.jit
        assert test.graph.compile_seconds == pytest.approx(method.compile_seconds)

        caplog.clear()
        seconds = method.compile_seconds
        for _ in range(3):
            test.test(("slow", x))  # compiled: no notice, no more seconds
        assert not caplog.records and method.compile_seconds == seconds
        test.test(("slow", np.ones((5, 2), np.float32)))  # a new shape compiles again
        assert method.compile_seconds > seconds + 0.3 and len(caplog.records) == 2

        caplog.clear()
        monkeypatch.setattr(compiling, "NOTICE_SECONDS", 60.0)
        test.test(("quick", x))  # a quick compile says nothing, but counts
        assert not caplog.records
        assert test.graph._functions["quick"].compile_seconds > 0


def test_the_run_summary_shows_the_seconds_spent_compiling_and_the_display_the_notices(tmp_path, monkeypatch):
    from rlgraph.training import ProgressDisplay, Trainer, load_run_spec

    monkeypatch.setattr(compiling, "NOTICE_SECONDS", 0.0)  # every compile announced
    spec = load_run_spec(
        {
            "environment": "CartPole-v1",
            "timesteps": 96,
            "seed": 1,
            "evaluation": {"episodes": 0},
            "agent": {
                "type": "dqn",
                "backend": "jax",
                "execution_spec": {"intra_op_threads": None},  # as other tests in the process left them
                "network_spec": [{"type": "dense", "units": 8, "activation": "relu"}],
                "memory_spec": {"type": "replay", "capacity": 64},
                "update_spec": {"steps_before_update": 32, "batch_size": 8, "update_interval": 16},
            },
        }
    )
    stream = io.StringIO()
    trainer = Trainer(spec, tmp_path / "run", display=ProgressDisplay(spec.timesteps, stream=stream))
    summary = trainer.run()
    assert summary.updates > 0
    assert 0 < summary.compile_seconds < summary.wall_seconds
    stored = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert stored["compile_seconds"] == pytest.approx(summary.compile_seconds)
    assert f"{summary.compile_seconds:.1f} s of it compiling" in summary.format()
    shown = stream.getvalue()
    assert "rlgraph: compiling 'update' on JAX" in shown
    assert "rlgraph: compiled 'update' in " in shown
    logger = logging.getLogger(compiling.LOGGER)
    assert not logger.handlers and logger.propagate and logger.level == logging.NOTSET  # as it was


CACHED_RUN = """
import json, sys
import numpy as np
from jax import monitoring

counts = {"cache_hits": 0, "cache_misses": 0}
monitoring.register_event_listener(
    lambda event, **_: counts.__setitem__(event.rsplit("/", 1)[-1], counts.get(event.rsplit("/", 1)[-1], 0) + 1)
)
import rlgraph
from rlgraph.components import Component
from rlgraph.spaces import FloatBox
from rlgraph.testing import ComponentTest


class Deep(Component):
    def __init__(self):
        super().__init__(scope="deep")

    def create_variables(self, input_spaces, action_space=None):
        self.w = self.get_variable("w", shape=(8, 8), initializer=0.1)

    @rlgraph.graph_fn(api=True)
    def forward(self, x):
        for _ in range(100):  # enough XLA work to pass the cache's least compile time
            x = self.ops.tanh(self.ops.matmul(x, self.w) + x)
        return x


test = ComponentTest(Deep(), {"x": FloatBox(shape=(8,), add_batch_rank=True)}, backend="jax", seed=1)
test.test(("forward", np.ones((2, 8), np.float32)))
print(json.dumps({"hits": counts["cache_hits"], "misses": counts["cache_misses"],
                  "seconds": test.graph.compile_seconds}))
"""


def test_a_second_process_loads_the_compiled_program_from_the_cache(tmp_path):
    environment = {key: value for key, value in os.environ.items() if not key.startswith("JAX_")}
    environment.pop("RLGRAPH_JAX_CACHE", None)
    environment["XDG_CACHE_HOME"] = str(tmp_path / "cache")

    def run() -> dict:
        done = subprocess.run(
            [sys.executable, "-c", CACHED_RUN],
            env=environment,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout.strip().splitlines()[-1])

    first = run()
    assert first["misses"] >= 1 and first["hits"] == 0 and first["seconds"] > 0
    assert list((tmp_path / "cache" / "rlgraph" / "jax").iterdir())  # where the backend keeps them
    second = run()
    assert second["hits"] == first["misses"] and second["misses"] == 0
