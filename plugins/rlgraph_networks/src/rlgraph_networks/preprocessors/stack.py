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

    API: ``preprocess(inputs)`` returns the preprocessed inputs; ``reset()`` resets the stateful
    preprocessors (a new episode). Container inputs (Dict/Tuple states) pass through the same stack,
    and each preprocessor treats each leaf separately (with its own state). :meth:`output_space`
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

    @rlgraph.api
    def preprocess(self, inputs: Any) -> Any:
        for preprocessor in self.preprocessors:
            inputs = preprocessor.call(inputs)
        return inputs

    @rlgraph.api
    def reset(self) -> None:
        for preprocessor in self.stateful:
            preprocessor.reset()


def _as_preprocessor(spec: Any, index: int) -> Preprocessor:
    try:
        return Preprocessor.from_spec(spec)
    except SpecError as error:
        raise rebase(error, f"preprocessors[{index}]") from None
