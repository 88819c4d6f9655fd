"""NumPy random generators' states as arrays, so that checkpoints (``.npz`` files) can hold them."""

from __future__ import annotations

import numpy as np

_WORD = 2**64 - 1


def generator_state(rng: np.random.Generator) -> np.ndarray:
    """The state of ``rng`` (a PCG64 generator, NumPy's default) as eight unsigned 64-bit words."""
    state = rng.bit_generator.state
    if state["bit_generator"] != "PCG64":
        raise TypeError(f"only PCG64 generators are stored, got {state['bit_generator']}")
    numbers = (state["state"]["state"], state["state"]["inc"], state["uinteger"], state["has_uint32"])
    return np.array([n >> shift & _WORD for n in numbers for shift in (64, 0)], dtype=np.uint64)


def set_generator_state(rng: np.random.Generator, words: np.ndarray) -> None:
    """Continue ``rng`` from what :func:`generator_state` returned."""
    values = [int(word) for word in np.asarray(words, dtype=np.uint64)]
    state, inc, uinteger, has_uint32 = (values[i] << 64 | values[i + 1] for i in range(0, 8, 2))
    rng.bit_generator.state = {
        "bit_generator": "PCG64",
        "state": {"state": state, "inc": inc},
        "has_uint32": has_uint32,
        "uinteger": uinteger,
    }
