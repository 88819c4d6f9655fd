"""The agent's persistence: weights, checkpoints (with the schedules' state) and exported policies."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol, cast

import numpy as np

from rlgraph.agents.base import AgentBase
from rlgraph.agents.roles import Role
from rlgraph.agents.specs import CHECKPOINT_NAME, keep_newest_checkpoints
from rlgraph.errors import CheckpointError, NotApplicableError
from rlgraph.graph.checks import non_finite_variables
from rlgraph.spaces.containers import Dict
from rlgraph.spaces.masks import ACTION_MASK, action_mask_space, without_action_mask
from rlgraph.utils.random_state import generator_state, set_generator_state

HOST_RANDOM = "agent"
"""The checkpoint name of :attr:`Agent.rng`'s state."""


class _PreprocessedActing(Protocol):
    """A root with the API method ``get_preprocessed_actions``."""

    def get_preprocessed_actions(self, *inputs: Any) -> dict[str, Any]: ...


class Persistence(AgentBase):
    """Weights and checkpoints (:meth:`store_model` holds the whole state: variables, counters, random streams,
    schedules), and the policy exported alone."""

    def get_weights(self) -> dict[str, np.ndarray]:
        """The policy's (trainable) weights as NumPy arrays keyed by scope: backend-neutral."""
        return self._built_graph().get_weights(trainable_only=True)

    def set_weights(self, weights: dict[str, np.ndarray]) -> None:
        """Set the weights :meth:`get_weights` returns (from this or another backend). An agent built for a
        role that holds fewer weights (a policy taking a learner's, critics included) takes its own."""
        self._built_graph().set_weights(weights, trainable_only=True, skip_extra=self.role is not Role.AGENT)
        if self.learner_group is not None:
            self.learner_group.sync()

    def preprocessing_state(self) -> dict[str, np.ndarray]:
        """The variables of stateful preprocessors (frame stacks, running statistics), by scope."""
        graph = self._built_graph()
        names = [
            name
            for component in self._built_root().walk()
            if getattr(component, "is_stateful", False)
            for name in component.variable_registry
        ]
        weights = graph.get_weights()
        return {name: weights[name] for name in names}

    def set_preprocessing_state(self, state: dict[str, np.ndarray]) -> None:
        """Restore what :meth:`preprocessing_state` returned."""
        if state:
            graph = self._built_graph()
            variables = graph.variables()
            graph.backend.assign_variables({name: variables[name] for name in state}, state)

    def store_model(
        self,
        path: str | os.PathLike | None = None,
        add_timestep: bool = True,
        metadata: Mapping[str, Any] | None = None,
    ) -> Path:
        """Write the agent's state to ``path`` (a folder, or a ``.npz`` file); return the file.

        The file holds every variable (weights, optimizer slots, memories, counters kept in the graph),
        the graph's random streams, :attr:`rng`, and the time step, episode and update counts: what
        training needs to go on where it stopped, with the caller's JSON ``metadata`` (a trainer's
        counts). ``path`` defaults to ``saver_spec.directory``. With
        ``saver_spec.max_checkpoints``, only the newest that many ``model-<timestep>.npz`` files this
        agent wrote into a folder stay there.
        """
        graph = self._built_graph()
        target = Path(path or self.saver_spec.directory or ".")
        if target.suffix != ".npz":
            target = target / (f"model-{self.timesteps}.npz" if add_timestep else "model.npz")
        metadata = {
            "agent": type(self).__name__,
            "role": self.role.value,
            "timesteps": self.timesteps,
            "episodes": self.episodes,
            "updates": self.updates,
            "schedule": self.schedule_state(),
            **(metadata or {}),
        }
        stored = graph.store(target, metadata, {HOST_RANDOM: generator_state(self.rng)})
        self._stored_checkpoints = keep_newest_checkpoints(
            self._stored_checkpoints, stored, self.saver_spec.max_checkpoints
        )
        return stored

    def load_model(self, path: str | os.PathLike) -> dict[str, Any]:
        """Load a checkpoint written by :meth:`store_model` (a file, or the newest in a folder), on
        any backend: the variables, the counters and :attr:`rng`, and the graph's random streams where
        it was written on this backend. Returns the checkpoint's metadata.

        A missing, truncated or foreign file, or one whose variables hold NaN or infinite values (a diverged
        state; a memory's minimum tree excepted), raises CheckpointError and leaves the agent as it was. A
        checkpoint written for a role that includes this one's (:attr:`role`) loads what this graph holds (a
        policy from a learner's); one of a lighter role loads where it lacks only memories (an agent from a
        learner fed from outside: its memory stays as it is).
        """
        graph = self._built_graph()
        metadata = graph.load(
            _checkpoint_file(Path(path)), fit=self._checkpoint_fit, may_be_infinite=self._memory_variables()
        )
        self.timesteps = int(metadata.get("timesteps", self.timesteps))
        self.episodes = int(metadata.get("episodes", self.episodes))
        self.updates = int(metadata.get("updates", self.updates))
        self._storage_filled = False  # the memories hold what the checkpoint held
        host = metadata.get("random_state", {}).get(HOST_RANDOM)
        if host is not None:
            set_generator_state(self.rng, host)
        self.set_schedule_state(metadata.get("schedule", {}))
        if self.learner_group is not None:
            self.learner_group.sync()
        return metadata

    def schedule_state(self) -> dict[str, Any]:
        """What the agent counts on the host beside the time step, episode and update counts (when its targets
        were last synced, say), as plain JSON data. A checkpoint keeps it (:meth:`store_model`), so that a
        loaded agent goes on with the stored one's schedule. Nothing by default."""
        return {}

    def set_schedule_state(self, state: Mapping[str, Any]) -> None:
        """Go on from :meth:`schedule_state`'s result, with the graph's variables already loaded. ``state``
        is empty for a checkpoint written before it kept one: the agent keeps what it has."""

    def _checkpoint_fit(self, metadata: Mapping[str, Any]) -> tuple[bool, frozenset[str]]:
        """How a checkpoint written for another role fits this graph (see :meth:`BuiltGraph.set_weights`):
        of a role that includes this one, its variables this graph lacks are skipped; of a lighter role, only
        the memories may be missing (a learner fed from outside keeps none). Every other variable must be there."""
        written = Role.of(metadata.get("role", Role.AGENT.value), "the checkpoint's role")
        if written is self.role:
            return False, frozenset()
        if written.includes(self.role):
            return True, frozenset()
        return False, frozenset(self._memory_variables())

    def diverged_variables(self) -> list[str]:
        """The names of the agent's variables that hold NaN, or an infinite value outside its memories (whose
        minimum trees are +inf where empty): a state that :meth:`load_model` refuses."""
        weights = self._built_graph().get_weights()
        return list(non_finite_variables(weights, self._memory_variables()))

    def _memory_variables(self) -> list[str]:
        """The names of the variables of the graph's memories (the components that count their records)."""
        return [
            name
            for component in self._built_root().walk()
            if getattr(component, "count_variable", None)
            for name in component.variables()
        ]

    def greedy_policy(self) -> Any:
        """The agent's greedy policy as a function of a batch of preprocessed states (backend tensors)
        to the greedy actions (backend tensors): the root's ``get_preprocessed_actions`` without
        exploration. What :meth:`export_policy` writes. Where states hold an action mask, the function
        takes the states without it and the mask: ``policy(states, action_mask)``."""
        if not self.has_api("get_preprocessed_actions"):
            raise NotApplicableError(
                f"{type(self).__name__} has no greedy policy of preprocessed states to export"
            )
        if self.internal_states_space is not None:
            raise NotApplicableError(
                "exporting a recurrent policy (with internal states) is not supported yet"
            )
        root = cast(_PreprocessedActing, self._built_root())  # has_api found the API method
        space = self.preprocessed_state_space
        if action_mask_space(space) is None:

            def policy(states: Any) -> Any:
                return root.get_preprocessed_actions(*self.action_inputs(states, None), False)["actions"]

            return policy
        assert isinstance(space, Dict)  # it holds an action mask
        (key,) = (name for name in space if name != ACTION_MASK)

        def masked_policy(states: Any, action_mask: Any) -> Any:
            inputs = {key: states, ACTION_MASK: action_mask}
            return root.get_preprocessed_actions(*self.action_inputs(inputs, None), False)["actions"]

        return masked_policy

    def export_inputs(self) -> dict[str, Any]:
        """The spaces of the exported policy's inputs, by name (batch rank added): ``states`` (the
        preprocessed states), and ``action_mask`` where they hold one."""
        from rlgraph.spaces import ContainerSpace

        space = self.preprocessed_state_space
        mask = action_mask_space(space)
        inputs = {"states": without_action_mask(space)}
        if mask is not None:
            inputs[ACTION_MASK] = mask
        for name, leaf in (("state", inputs["states"]), ("action", self.action_space)):
            if isinstance(leaf, ContainerSpace):
                raise NotApplicableError(
                    f"exporting a policy with a container {name} space is not supported yet"
                )
        return {name: leaf.with_batch_rank() for name, leaf in inputs.items()}

    def export_policy(self, path: str | os.PathLike, format: str) -> Path:
        """Write the greedy policy (preprocessed states in, greedy actions out; with the action mask as a
        second input where states hold one: see :meth:`export_inputs`) to ``path`` as a program that runs
        without RLgraph, in a ``format`` the agent's backend writes (``torchscript`` and ``onnx`` on
        torch, ``savedmodel`` on TensorFlow, ``stablehlo`` on JAX)."""
        inputs = self.export_inputs()
        graph = self._built_graph()
        examples = {name: space.sample(8) for name, space in inputs.items()}
        example = examples["states"] if len(examples) == 1 else examples
        return Path(
            graph.backend.export_policy(self.greedy_policy(), example, graph.variables(), Path(path), format)
        )

    def export_graph(self, path: str | os.PathLike) -> Path:
        """Write the component graph as Graphviz DOT text."""
        return self._built_graph().export_graph(path)


def _checkpoint_file(path: Path) -> Path:
    if not path.is_dir():
        return path
    found = [(int(m.group(1)), p) for p in path.iterdir() if (m := CHECKPOINT_NAME.search(p.name))]
    if (path / "model.npz").is_file():
        found.append((-1, path / "model.npz"))
    if not found:
        raise CheckpointError(f"No checkpoint (model-<timestep>.npz or model.npz) in {str(path)!r}.")
    return max(found)[1]
