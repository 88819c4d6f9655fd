"""A stack of preprocessors: RLgraph's ``preprocessing_spec``."""

from __future__ import annotations

from typing import Any

import rlgraph
from rlgraph.components import Component
from rlgraph.errors import SpecError
from rlgraph.spaces import Space
from rlgraph.specs.validation import rebase
from rlgraph_networks.preprocessors.preprocessor import Preprocessor


class PreprocessorStack(Component):
    """Preprocessors applied in order; built from RLgraph's ``preprocessing_spec`` (a list; empty: identity).

    API: ``preprocess(inputs, env_rows=None)`` returns the preprocessed inputs; ``reset(env_rows=None)``
    resets the stateful preprocessors (a new episode), of the environments ``env_rows`` or all. Container inputs (Dict/Tuple states) pass through the same stack,
    and each preprocessor treats each leaf separately (with its own state), passing a state's action mask
    through unchanged (see :mod:`rlgraph.spaces.masks`). :meth:`output_space`
    gives the preprocessed space without a backend: the agent sizes its memory with it.

    Args:
        preprocessors: Preprocessor specs or instances (``{"type": "grayscale", ...}``), applied first to last.
        scope: The stack's name.
    """

    def __init__(
        self,
        preprocessors: list[Preprocessor] | None = None,
        scope: str = "preprocessor-stack",
        **kwargs: Any,
    ) -> None:
        super().__init__(scope=scope, **kwargs)
        built = [_as_preprocessor(spec, index) for index, spec in enumerate(preprocessors or [])]
        self.add_components(*built)
        self.preprocessors: tuple[Preprocessor, ...] = tuple(built)
        self.stateful: tuple[Preprocessor, ...] = tuple(p for p in built if p.is_stateful)

    @classmethod
    def spec_shorthand(cls, value: Any) -> Any:
        """A list (or tuple) of preprocessor specs stands for ``{"preprocessors": [...]}``."""
        if isinstance(value, list | tuple):
            return {"preprocessors": list(value)}
        return super().spec_shorthand(value)

    @property
    def is_stateful(self) -> bool:
        """Whether any preprocessor keeps state (so ``reset()`` does something)."""
        return bool(self.stateful)

    def output_space(self, space: Space) -> Space:
        """The space of ``preprocess``'s output for inputs of ``space`` (ranks kept)."""
        for preprocessor in self.preprocessors:
            space = preprocessor.output_space(space)
        return space

    @property
    def max_environments(self) -> int | None:
        """How many environments the stateful preprocessors keep apart (None: any number)."""
        limits = [p.max_environments for p in self.stateful if p.max_environments is not None]
        return min(limits) if limits else None

    @rlgraph.api
    def preprocess(self, inputs: Any, env_rows: Any = None) -> Any:
        """``env_rows``: the environment of each row, for stateful preprocessors (default: row i is environment i)."""
        for preprocessor in self.preprocessors:
            inputs = (
                preprocessor.call(inputs, env_rows) if preprocessor.is_stateful else preprocessor.call(inputs)
            )
        return inputs

    @rlgraph.api
    def reset(self, env_rows: Any = None) -> None:
        """Clear the stateful preprocessors' state: of the environments ``env_rows``, or all."""
        for preprocessor in self.stateful:
            preprocessor.reset(env_rows)


def _as_preprocessor(spec: Any, index: int) -> Preprocessor:
    try:
        return Preprocessor.from_spec(spec)
    except SpecError as error:
        raise rebase(error, f"preprocessors[{index}]") from None
