"""The Preprocessor base class: a layer for states, applied to every leaf of container inputs."""

from __future__ import annotations

import abc
from typing import Any, ClassVar

import numpy as np

import rlgraph
from rlgraph.errors import BuildError
from rlgraph.spaces import BoolBox, BoxSpace, FloatBox, IntBox, Space
from rlgraph.spaces.masks import ACTION_MASK, action_mask_space
from rlgraph.utils import nested
from rlgraph_networks.layers.layer import Layer


class Preprocessor(Layer):
    """A layer that preprocesses states: ``call(inputs)`` returns the preprocessed inputs.

    Container inputs (Dict/Tuple states) are preprocessed leaf by leaf; a stateful preprocessor
    keeps separate state per leaf. A state's action mask (the ``action_mask`` key of a Dict state: see
    :mod:`rlgraph.spaces.masks`) passes through unchanged. Stateful preprocessors (``is_stateful``) also have the API
    method ``reset()``, which clears their state (for a new episode). :meth:`output_space` gives
    the space of preprocessed values without a backend (the agent sizes its memory with it).

    Subclasses implement :meth:`preprocess_leaf` (and :meth:`leaf_output_space` where the space
    changes); stateful ones also :meth:`create_leaf_variables` and :meth:`reset_leaf`.
    """

    is_stateful: ClassVar[bool] = False

    def __init__(self, scope: str = "preprocessor", **kwargs: Any) -> None:
        super().__init__(scope=scope, **kwargs)
        #: Path -> leaf input space (path ``""`` for a single-box input); known after the build.
        self.leaf_spaces: dict[str, Space] = {}
        #: Path -> what create_leaf_variables returned for that leaf (its variables, or constants).
        self.leaf_state: dict[str, Any] = {}

    # -- without a backend ---------------------------------------------------------------------
    def output_space(self, space: Space) -> Space:
        """The space of ``call``'s output for inputs of ``space`` (ranks kept)."""
        mask = action_mask_space(space)
        if mask is None:
            return space.map(self._checked_output_space)
        rest = space._from_children({k: v for k, v in space.items() if k != ACTION_MASK}, space._ranks())
        mapped = rest.map(self._checked_output_space)
        children = {key: mask if key == ACTION_MASK else mapped[key] for key in space}  # in the space's order
        return space._from_children(children, space._ranks())

    def _checked_output_space(self, space: Space) -> Space:
        self.check_leaf_space(space)
        return self.leaf_output_space(space)

    def leaf_output_space(self, space: Space) -> Space:
        """The output space for one leaf input space; the same space by default."""
        return space

    def check_leaf_space(self, space: Space) -> None:
        """Raise a BuildError if this preprocessor cannot take leaf inputs of ``space``."""
        if not isinstance(space, BoxSpace):
            self.refuse(space, "a FloatBox, IntBox or BoolBox")

    def refuse(self, space: Space, needed: str) -> None:
        """Raise a BuildError: this preprocessor needs ``needed``, not ``space``."""
        raise BuildError(
            f"{type(self).__name__} {self.global_scope!r} needs {needed}, got {space}.",
            component=self.global_scope,
        )

    # -- the build -----------------------------------------------------------------------------
    def create_variables(self, input_spaces: dict[str, Any]) -> None:
        leaves = input_spaces["inputs"].flatten()
        self.leaf_spaces = {path: space for path, space in leaves.items() if path != ACTION_MASK}
        for path, space in self.leaf_spaces.items():
            self.check_leaf_space(space)
            self.leaf_state[path] = self.create_leaf_variables(path, space)

    def create_leaf_variables(self, path: str, space: Space) -> Any:
        """Create the variables of one leaf (name them with :meth:`variable_name`) and return them; or
        return constants of the leaf that :meth:`preprocess_leaf` needs. Given to it as ``state``.
        """
        return None

    def variable_name(self, path: str, name: str) -> str:
        """The name of variable ``name`` of the leaf at ``path`` (``name`` itself for a single box)."""
        return f"{path}/{name}" if path else name

    # -- graph functions -------------------------------------------------------------------------
    @rlgraph.graph_fn(api=True)
    def call(self, inputs: Any) -> Any:
        """The preprocessed ``inputs``."""
        return self._per_leaf(inputs)

    def _per_leaf(self, inputs: Any, *args: Any) -> Any:
        """``preprocess_leaf`` on every leaf of ``inputs`` (with ``args`` after its state)."""
        if "" in self.leaf_spaces:
            return self.preprocess_leaf(inputs, self.leaf_spaces[""], self.leaf_state[""], *args)
        flat = nested.flatten_with_paths(inputs)
        return nested.unflatten_like(
            inputs,
            {
                path: value
                if path == ACTION_MASK
                else self.preprocess_leaf(value, self.leaf_spaces[path], self.leaf_state[path], *args)
                for path, value in flat.items()
            },
        )

    @abc.abstractmethod
    def preprocess_leaf(self, inputs: Any, space: Space, state: Any) -> Any:
        """The preprocessed value of one leaf (called inside a graph function: use ``self.ops``)."""


class StatefulPreprocessor(Preprocessor):
    """A preprocessor with state in variables: ``reset()`` clears it.

    Both ``call`` and ``reset`` take ``env_rows``, the environment each batch row belongs to (int64;
    default: row ``i`` is environment ``i``), for preprocessors that keep state per environment (a
    frame stack); the others ignore it. :attr:`max_environments` is how many environments one keeps
    apart (None: any number).
    """

    is_stateful: ClassVar[bool] = True
    max_environments: int | None = None

    @rlgraph.graph_fn(api=True)
    def call(self, inputs: Any, env_rows: Any = None) -> Any:
        """The preprocessed ``inputs`` (their rows from the environments ``env_rows``)."""
        return self._per_leaf(inputs, env_rows)

    @rlgraph.graph_fn(api=True)
    def reset(self, env_rows: Any = None) -> None:
        """Clear the state of the environments ``env_rows`` (None: of all)."""
        for path, state in self.leaf_state.items():
            self.reset_leaf(self.leaf_spaces[path], state, env_rows)

    @abc.abstractmethod
    def preprocess_leaf(self, inputs: Any, space: Space, state: Any, env_rows: Any = None) -> Any:
        """The preprocessed value of one leaf, its rows from environments ``env_rows`` (None: row i is
        environment i); called inside a graph function."""

    @abc.abstractmethod
    def reset_leaf(self, space: Space, state: Any, env_rows: Any = None) -> None:
        """Clear one leaf's state: of the environments ``env_rows``, or all (called inside a graph function)."""


def box_space(shape: tuple[int, ...], dtype: Any, like: Space) -> Space:
    """An unbounded box of ``shape`` and ``dtype`` with the batch/time ranks of ``like``."""
    ranks = {
        "add_batch_rank": like.add_batch_rank,
        "add_time_rank": like.add_time_rank,
        "time_major": like.time_major,
    }
    kind = np.dtype(dtype).kind
    if kind == "f":
        return FloatBox(shape=shape, dtype=dtype, **ranks)
    if kind in "iu":
        return IntBox(shape=shape, dtype=dtype, **ranks)
    return BoolBox(shape=shape, **ranks)
