"""Decays: a value that moves from ``from`` to ``to`` over time steps (exploration rates, noise scales).

Short specs: a number is a constant (``0.1``); ``[from, to]`` decays linearly; ``["exponential",
from, to]`` names the kind. Spec keys ``from`` and ``to`` are RLgraph's (``from_``/``to_`` here).
"""

from __future__ import annotations

import abc
import math
from typing import Any, ClassVar

import rlgraph
from rlgraph.components import Component
from rlgraph.errors import SpecError
from rlgraph.utils.naming import normalize_name, suggestion_text

#: Kinds a list spec ``[kind, from, to]`` may name (a constant is given as a plain number).
_KINDS = {"linear": "linear_decay", "polynomial": "polynomial_decay", "exponential": "exponential_decay"}


class Decay(Component, metaclass=abc.ABCMeta):
    """``decayed_value(time_step)``: ``from`` until ``start_timestep``, then a decay over
    ``num_timesteps`` steps to ``to``, and ``to`` afterwards. Subclasses give the shape of the decay
    as :meth:`fraction` (0 at the start, 1 at the end).
    """

    spec_aliases: ClassVar[dict[str, str]] = {"from": "from_", "to": "to_"}

    def __init__(
        self,
        from_: float = 1.0,
        to_: float = 0.0,
        start_timestep: int = 0,
        num_timesteps: int = 10000,
        scope: str = "decay",
        **kwargs: Any,
    ) -> None:
        super().__init__(scope=scope, **kwargs)
        if num_timesteps < 1:
            raise SpecError(f"must be >= 1, got {num_timesteps}", "num_timesteps")
        if start_timestep < 0:
            raise SpecError(f"must be >= 0, got {start_timestep}", "start_timestep")
        self.from_, self.to_ = float(from_), float(to_)
        self.start_timestep, self.num_timesteps = int(start_timestep), int(num_timesteps)
        # Worked out once: the value runs on every action (the same arithmetic as written out in value()).
        self._scale = 1.0 / self.num_timesteps
        self._start = self.start_timestep * self._scale

    @classmethod
    def spec_shorthand(cls, value: Any) -> Any:
        """``0.1`` -> constant; ``[1.0, 0.1]`` -> linear; ``["polynomial", 1.0, 0.1]`` -> that kind."""
        if isinstance(value, int | float) and not isinstance(value, bool):
            return {"type": "constant_decay", "constant_value": float(value)}
        if isinstance(value, list | tuple):
            if len(value) == 2:
                return {"type": "linear_decay", "from": value[0], "to": value[1]}
            if len(value) == 3 and isinstance(value[0], str):
                kind = _KINDS.get(normalize_name(value[0]).removesuffix("decay"))
                if kind is None:
                    raise SpecError(
                        f"unknown decay {value[0]!r}.{suggestion_text(value[0], _KINDS)} "
                        f"Known: {', '.join(_KINDS)}"
                    )
                return {"type": kind, "from": value[1], "to": value[2]}
        raise SpecError(
            "expected a decay spec: a dict, a number (constant), [from, to] (linear) or [kind, from, to], "
            f"got {value!r}"
        )

    @rlgraph.graph_fn(api=True)
    def decayed_value(self, time_step: Any) -> Any:
        """The value at ``time_step`` (float32 scalar)."""
        return self.value(self.ops.cast(time_step, "float32"))

    def value(self, steps: Any) -> Any:
        """The value after ``steps`` time steps (a float32 tensor): few ops, it runs on every action."""
        progress = self.ops.clip(steps * self._scale - self._start, 0.0, 1.0)
        return self.from_ + (self.to_ - self.from_) * self.fraction(progress)

    @abc.abstractmethod
    def fraction(self, progress: Any) -> Any:
        """How far the value has moved from ``from`` to ``to`` at ``progress`` in [0, 1] of the decay."""


class ConstantDecay(Decay):
    """Always ``constant_value``."""

    def __init__(
        self, constant_value: float = 0.0, scope: str = "constant-decay", device: str | None = None
    ) -> None:
        super().__init__(from_=constant_value, to_=constant_value, scope=scope, device=device)

    def value(self, steps: Any) -> Any:
        return self.ops.full((), self.from_)

    def fraction(self, progress: Any) -> Any:
        return progress * 0.0


class LinearDecay(Decay):
    """Straight from ``from`` to ``to``."""

    def __init__(self, scope: str = "linear-decay", **kwargs: Any) -> None:
        super().__init__(scope=scope, **kwargs)
        # value = clip(steps * slope + offset, low, high): one multiply-add and a clip per action.
        self._slope = (self.to_ - self.from_) / self.num_timesteps
        self._offset = self.from_ - self._slope * self.start_timestep
        self._low, self._high = min(self.from_, self.to_), max(self.from_, self.to_)

    def value(self, steps: Any) -> Any:
        return self.ops.clip(steps * self._slope + self._offset, self._low, self._high)

    def fraction(self, progress: Any) -> Any:
        return progress


class PolynomialDecay(Decay):
    """``to + (from - to) * (1 - progress) ** power``: fast at first for ``power > 1``."""

    def __init__(self, power: float = 2.0, scope: str = "polynomial-decay", **kwargs: Any) -> None:
        super().__init__(scope=scope, **kwargs)
        if power <= 0:
            raise SpecError(f"must be > 0, got {power}", "power")
        self.power = float(power)

    def fraction(self, progress: Any) -> Any:
        return 1.0 - self.ops.pow(1.0 - progress, self.power)


class ExponentialDecay(Decay):
    """Halves the distance to ``to`` every ``half_life`` steps (default: a tenth of the decay), and
    lands on ``to`` at the decay's end: ``fraction = (1 - 0.5 ** (t / half_life)) / (1 - 0.5 ** (T / half_life))``.
    ``decay_rate`` (the factor per ``num_timesteps``) may be given instead of ``half_life``.
    """

    def __init__(
        self,
        half_life: float | None = None,
        decay_rate: float | None = None,
        scope: str = "exponential-decay",
        **kwargs: Any,
    ) -> None:
        super().__init__(scope=scope, **kwargs)
        if half_life is not None and decay_rate is not None:
            raise SpecError("give half_life or decay_rate, not both", "half_life")
        if decay_rate is not None:
            if not 0.0 < decay_rate < 1.0:
                raise SpecError(f"must be in (0, 1), got {decay_rate}", "decay_rate")
            half_life = self.num_timesteps * math.log(0.5) / math.log(decay_rate)
        self.half_life = float(half_life) if half_life is not None else self.num_timesteps / 10.0
        if self.half_life <= 0:
            raise SpecError(f"must be > 0, got {half_life}", "half_life")

    def fraction(self, progress: Any) -> Any:
        halvings = self.num_timesteps / self.half_life
        return (1.0 - self.ops.exp(math.log(0.5) * halvings * progress)) / (1.0 - 0.5**halvings)
