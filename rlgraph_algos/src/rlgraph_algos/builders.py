"""What the algorithms' builders share: preprocessing, policies, exploration, optimizers and replay memories made
from the config's specs, with errors naming the key at fault."""

from __future__ import annotations

from typing import Any, ClassVar

from rlgraph.agents.builder import Builder
from rlgraph.agents.config import default_of
from rlgraph.components import Component
from rlgraph_algos.replay import replay_memory
from rlgraph_networks.explorations.exploration import Exploration
from rlgraph_networks.optimizers import Optimizer
from rlgraph_networks.policies.policy import Policy
from rlgraph_networks.preprocessors.stack import PreprocessorStack


class AlgorithmBuilder(Builder):
    """A :class:`~rlgraph.agents.builder.Builder` with the parts every algorithm here makes the same way."""

    #: The optimizer where ``optimizer_spec`` gives none.
    default_optimizer: ClassVar[dict[str, Any]] = {"type": "adam", "learning_rate": 1e-3}

    def spec(self, name: str) -> Any:
        """The config's ``name`` (None where the algorithm's config has no such key)."""
        return getattr(self.config, name, None)

    @property
    def network_spec(self) -> Any:
        """The policy's network (the config's ``network_spec``; an algorithm may derive it)."""
        return self.spec("network_spec")

    def preprocessor(self) -> PreprocessorStack:
        """The ``preprocessing_spec``'s stack; sets the preprocessed states' space."""
        preprocessor = PreprocessorStack.from_spec(
            self.spec("preprocessing_spec") or [], path="preprocessing_spec"
        )
        self.preprocessed_state_space = preprocessor.output_space(
            self.state_space.with_batch_rank()
        ).strip_ranks()
        return preprocessor

    def policy_spec(self, network_spec: Any = None) -> dict[str, Any]:
        """``policy_spec`` with the network (``network_spec``, or the one given) and ``action_adapter_spec``."""
        spec = dict(self.spec("policy_spec") or {})
        spec.setdefault("network_spec", self.network_spec if network_spec is None else network_spec)
        adapter = self.spec("action_adapter_spec")
        if adapter is not None:
            spec.setdefault("action_adapter_spec", adapter)
        return spec

    def policy(self, network_spec: Any = None, base: type[Policy] = Policy) -> Policy:
        """The policy of :meth:`policy_spec` (``base`` where the spec names no type)."""
        return base.from_spec(
            self.policy_spec(network_spec), path="policy_spec", action_space=self.action_space
        )

    def exploration(self) -> Exploration:
        return Exploration.from_spec(self.spec("exploration_spec"), path="exploration_spec")

    def optimizer(
        self, spec: Any = None, path: str = "optimizer_spec", prefix: str | None = None
    ) -> Optimizer:
        """The optimizer of ``spec`` (else ``optimizer_spec``, else :attr:`default_optimizer`); ``prefix`` sets
        its scope apart from the others' (``critic-adam``)."""
        if spec is None:
            spec, path = self.spec("optimizer_spec") or dict(self.default_optimizer), "optimizer_spec"
        optimizer = Optimizer.from_spec(spec, path=path)
        if prefix is not None:
            optimizer.scope = f"{prefix}-{optimizer.scope}"
        return optimizer

    @property
    def memory_spec(self) -> Any:
        """``memory_spec``, else the default of the algorithm's config."""
        return self.config.memory_spec or default_of(type(self.config), "memory_spec")

    def memory(self) -> Component:
        """The replay memory of :attr:`memory_spec` (unbuilt: made by every role, to check the spec)."""
        return replay_memory(self.memory_spec, self.config.update_spec.batch_size)
