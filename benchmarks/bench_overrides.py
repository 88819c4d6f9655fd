"""What does each backend's override of an optional op gain over the core's version of it?

The ops contract's optional ops (``rlgraph.graph.ops.optional``) are written once in the core from the
primitives (``rlgraph.graph.composites``); a backend keeps its own only where it pays. For every
override a backend has, this times the override and the core's version on that backend's primitives, in
one process, on the shapes the algorithms use: discounted sums over a rollout (GAE: T x 8 environments,
reversed, per-step discounts) and an LSTM layer (R2D2's and recurrent PPO's: batch 16, 64 units). Calls
run as the backend runs graph functions: eagerly on torch, inside ``tf.function`` on TensorFlow (the
time axis unknown, as API methods trace it), inside ``jax.jit`` on JAX. The ratio is the core's time over
the override's: above 1, the override pays.

Run: ``python benchmarks/bench_overrides.py`` (about a minute); ``--backends torch``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from rlgraph.graph.backend import load_backend
from rlgraph.graph.composites import complete_ops, shared_version
from rlgraph.graph.ops import OPTIONAL_OPS


def workloads() -> dict[str, list[tuple[str, tuple, dict]]]:
    """op -> (label, NumPy args, kwargs) for each shape timed."""
    rng = np.random.default_rng(0)

    def gae(steps: int) -> tuple[str, tuple, dict]:
        x = rng.normal(size=(steps, 8)).astype(np.float32)
        discounts = (0.99 * (rng.uniform(size=(steps, 8)) > 0.02)).astype(np.float32)
        return f"T={steps} x 8", (x, discounts), {"reverse": True}

    def lstm(steps: int, resets: bool) -> tuple[str, tuple, dict]:
        units, inputs = 64, 32
        args = (
            rng.normal(size=(16, steps, inputs)).astype(np.float32),
            (np.zeros((16, units), np.float32), np.zeros((16, units), np.float32)),
            (0.1 * rng.normal(size=(inputs, 4 * units))).astype(np.float32),
            (0.1 * rng.normal(size=(units, 4 * units))).astype(np.float32),
            np.zeros(4 * units, np.float32),
        )
        if resets:
            args += (rng.uniform(size=(16, steps)) < 0.05,)
        return f"T={steps}{' resets' if resets else ''}", args, {}

    x = rng.normal(size=(256, 64)).astype(np.float32)
    kernel, bias = rng.normal(size=(64, 64)).astype(np.float32), np.zeros(64, np.float32)
    weights = tuple(rng.normal(size=(64, 64)).astype(np.float32) for _ in range(8))
    return {
        "discounted_cumsum": [gae(128), gae(2048)],
        "lstm": [lstm(20, False), lstm(80, False), lstm(80, True)],
        # acting (one state of CartPole into a hidden layer) and learning (a batch of 256)
        "linear": [
            ("1 x 4 -> 128", (x[:1, :4], kernel[:4], bias), {}),
            ("256 x 64 -> 64", (x, kernel, bias), {}),
        ],
        "random_bernoulli": [("(64,) eager", ((64,), 0.1), {EAGER: True})],
        # a target network's soft update: 8 variables of 64 x 64 towards 8 others
        "assign_lerp": [("8 x 64 x 64", (VARIABLES, weights, 0.005), {EAGER: True})],
        # an optimizer step's writes after a finite loss: 8 variables of 64 x 64
        "assign_if": [("8 x 64 x 64", (True, VARIABLES, weights), {EAGER: True})],
    }


#: A workload's kwargs key: run eagerly (random draws and variable writes, which the executor's compiled
#: programs thread their own way), or on TensorFlow in a ``tf.function`` holding its arguments.
EAGER = "eager"
#: An argument standing for the variables a workload writes (made by the backend from the next argument).
VARIABLES = "variables"


def backend_runner(name: str) -> tuple[Any, Any, Callable[..., Callable[[], Any]]]:
    """(the backend's own ops, its completed namespace, how a call of ``fn(*args)`` runs there)."""
    own, ops, compiled = _runners(name)
    backend = load_backend(name)

    def runner(fn: Callable[..., Any], args: tuple, eager: bool) -> Callable[[], Any]:
        if not eager:
            return compiled(fn, args)
        if VARIABLES in args:  # variables, then the values they take
            at = args.index(VARIABLES)
            arrays = args[at + 1]
            made = [backend.create_variable(f"v{i}", value, False, None) for i, value in enumerate(arrays)]
            args = (*args[:at], made, [ops.constant(value) for value in arrays], *args[at + 2 :])
        if name == "tf":
            import tensorflow as tf

            return tf.function(lambda: fn(*args))
        return lambda: fn(*args)

    return own, ops, runner


def _runners(name: str) -> tuple[Any, Any, Callable[[Callable[..., Any], tuple], Callable[[], Any]]]:
    if name == "torch":
        import torch

        from rlgraph_torch.ops import create_ops

        def runner(fn: Callable[..., Any], args: tuple) -> Callable[[], Any]:
            tensors = _map(torch.from_numpy, args)
            return lambda: fn(*tensors)

    elif name == "tf":
        import tensorflow as tf

        from rlgraph_tf.ops import create_ops

        def runner(fn: Callable[..., Any], args: tuple) -> Callable[[], Any]:
            tensors = _map(tf.constant, args)
            signature = _map(lambda a: tf.TensorSpec([None] * a.ndim, tf.as_dtype(a.dtype)), args)
            compiled = tf.function(lambda *a: fn(*a), input_signature=list(signature))
            return lambda: tf.nest.map_structure(lambda t: t.numpy(), compiled(*tensors))

    else:
        import jax

        import rlgraph_jax.backend  # noqa: F401 - the backend's 64-bit mode
        from rlgraph_jax.ops import create_ops

        def runner(fn: Callable[..., Any], args: tuple) -> Callable[[], Any]:
            arrays = _map(jax.numpy.asarray, args)
            compiled = jax.jit(fn)
            return lambda: jax.block_until_ready(compiled(*arrays))

    return create_ops(0), complete_ops(create_ops(0)), runner


def _map(function: Callable[[np.ndarray], Any], value: Any) -> Any:
    if isinstance(value, tuple):
        return tuple(_map(function, item) for item in value)
    return function(value) if isinstance(value, np.ndarray) else value


def seconds_per_call(call: Callable[[], Any], budget: float = 0.5) -> float:
    call()  # compile or warm up
    calls, start = 0, time.perf_counter()
    while time.perf_counter() - start < budget or calls < 5:
        call()
        calls += 1
    return (time.perf_counter() - start) / calls


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", nargs="+", default=["torch", "tf", "jax"])
    options = parser.parse_args(argv)
    print(f"{'backend':8} {'op':18} {'shape':16} {'override us':>12} {'core us':>10} {'core/override':>14}")
    for backend in options.backends:
        own, ops, runner = backend_runner(backend)
        overridden = sorted(name for name in OPTIONAL_OPS if callable(vars(own).get(name)))
        for op in overridden:
            for label, args, options in workloads().get(op, []):
                kwargs = {key: value for key, value in options.items() if key != EAGER}
                eager = options.get(EAGER, False)
                override = seconds_per_call(
                    runner(lambda *a, o=op, k=kwargs, ops=ops: getattr(ops, o)(*a, **k), args, eager)
                )
                core = seconds_per_call(
                    runner(lambda *a, o=op, k=kwargs, ops=ops: shared_version(ops, o)(*a, **k), args, eager)
                )
                print(
                    f"{backend:8} {op:18} {label:16} {override * 1e6:12.1f} {core * 1e6:10.1f} {core / override:14.2f}"
                )
        served = sorted(OPTIONAL_OPS - set(overridden))
        print(f"{backend:8} the core's version serves: {', '.join(served)}")


if __name__ == "__main__":
    main()
