"""An agent sets its backend's thread pools from ``execution_spec`` (process-wide, so each case runs in a
process of its own): the defaults (1 and 1) where the pools are still free, a clear error where a count
given in the spec can no longer apply, a warning where the default cannot."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

#: Per backend: the code that fixes its pools at values other than 1 (as code run before the agent may).
FIX_POOLS = {
    "torch": "import torch; torch.set_num_threads(2); torch.set_num_interop_threads(3)",
    "tf": "import tensorflow as tf; tf.constant(1.0) + 1.0  # the runtime starts: its default pools (0)",
    "jax": "import jax.numpy as jnp; jnp.ones(1) + 1.0  # XLA's runtime starts: its default pool (0)",
}
#: Per backend: the pool that code run first fixes (XLA's CPU runtime reads its one setting, a single
#: thread or a pool over every core, when it starts, and runs a program's ops one after another).
FIXED_POOL = {"torch": "inter_op", "tf": "inter_op", "jax": "intra_op"}
#: Per backend: counts other than the defaults (1 and 1) a spec can set (none for JAX).
OTHER_COUNTS = {"torch": (2, 2), "tf": (2, 2), "jax": (1, 1)}

SCRIPT = """
import json, sys, warnings
{fix}
from rlgraph.agents import Agent
from rlgraph.errors import SpecError
execution_spec = json.loads(sys.argv[1])
spec = {{"type": "random", "state_space": {{"type": "float_box", "shape": [4]}},
        "action_space": {{"type": "int_box", "high": 2}}, "backend": "{backend}", "execution_spec": execution_spec}}
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    try:
        agent = Agent.from_spec(spec)
        result = {{"threads": agent.threads}}
    except SpecError as error:
        result = {{"error": str(error)}}
result["warnings"] = [str(w.message) for w in caught if "threads" in str(w.message)]
print(json.dumps(result))
"""


def run_agent(backend: str, execution_spec: dict, fixed: bool) -> dict:
    script = SCRIPT.format(fix=FIX_POOLS[backend] if fixed else "", backend=backend)
    result = subprocess.run(
        [sys.executable, "-c", script, json.dumps(execution_spec)], capture_output=True, text=True, check=True
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.fixture
def backend(rlgraph_backend):
    if rlgraph_backend not in FIX_POOLS:
        pytest.skip("the NumPy reference has no thread pools")
    pytest.importorskip("rlgraph_algos")  # the random agent
    return rlgraph_backend


def test_an_agent_runs_its_backend_on_one_thread_by_default(backend):
    assert run_agent(backend, {}, fixed=False) == {"threads": {"intra_op": 1, "inter_op": 1}, "warnings": []}


def test_the_spec_s_thread_counts_apply(backend):
    intra_op, inter_op = OTHER_COUNTS[backend]
    result = run_agent(backend, {"intra_op_threads": intra_op, "inter_op_threads": inter_op}, fixed=False)
    assert result == {"threads": {"intra_op": intra_op, "inter_op": inter_op}, "warnings": []}


def test_counts_given_where_the_pools_are_fixed_are_a_clear_error(backend):
    pool = FIXED_POOL[backend]
    result = run_agent(backend, {f"{pool}_threads": 1}, fixed=True)
    assert f"execution_spec.{pool}_threads" in result["error"]
    assert (
        "process-wide and fixed" in result["error"] and "first agent built in the process" in result["error"]
    )


def test_defaults_that_cannot_apply_warn_and_the_counts_in_effect_are_recorded(backend):
    pool = FIXED_POOL[backend]
    result = run_agent(backend, {}, fixed=True)
    assert result["threads"][pool] != 1
    assert any(w.startswith(f"execution_spec.{pool}_threads (default 1)") for w in result["warnings"])
    kept = run_agent(backend, {"intra_op_threads": None, "inter_op_threads": None}, fixed=True)
    assert kept["warnings"] == [] and kept["threads"][pool] == result["threads"][pool]
