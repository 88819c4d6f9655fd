"""Policies: a neural network, an action adapter and a distribution per action leaf."""

from __future__ import annotations

from typing import Any

import rlgraph
from rlgraph.components import Component
from rlgraph.errors import NotApplicableError, SpecError
from rlgraph.spaces import ContainerSpace, Dict, IntBox, Space
from rlgraph.spaces.masks import MASKED_LOGIT, action_mask_of
from rlgraph.specs.validation import rebase
from rlgraph_networks.neural_network import NeuralNetwork
from rlgraph_networks.policies.action_adapter import ActionAdapter


class Policy(Component):
    """Actions from states: ``network`` then, per leaf of the action space, an :class:`ActionAdapter`
    giving the parameters of that leaf's distribution.

    API methods take ``nn_inputs`` (batched states) and return values nested like the action space:

    * ``get_action(nn_inputs, deterministic=False)``: actions (the distributions' modes when
      ``deterministic``, draws otherwise).
    * ``get_action_and_log_prob(nn_inputs, deterministic=False)``: ``(actions, log_probs)``, the
      log-likelihood of the drawn actions (a squashed normal's at the drawn value before squashing).
    * ``get_differentiable_action_and_log_prob(nn_inputs, temperature=1.0)``: ``(actions, log_probs)`` of
      draws through which gradients reach the policy's variables (SAC's): reparameterized for continuous
      leaves, straight-through Gumbel-softmax one-hot vectors ``(batch, *shape, n)`` (float32) at this
      temperature for IntBox leaves (whose log-likelihood is its expectation, minus the entropy: see
      ``Categorical``). Only for policies whose distributions have such draws.
    * ``get_log_prob(nn_inputs, actions)``, ``get_entropy(nn_inputs)`` and both from one pass,
      ``get_log_prob_and_entropy(nn_inputs, actions)``: summed over every action dimension and leaf
      (one value per batch row), as are the log-likelihoods above.
    * ``get_distribution_parameters(nn_inputs)``, ``get_nn_outputs(nn_inputs)``.
    * ``get_q_values(nn_inputs)``: for IntBox actions, the adapter's outputs ``(batch, *shape, n)``
      read as Q-values (other action spaces have none: ``NotApplicableError``).

    States holding an action mask (``action_mask``, see :mod:`rlgraph.spaces.masks`): the network sees
    them without it, and a masked action's logit (its Q-value, for DQN) is ``MASKED_LOGIT`` (-1e9), so it
    is never drawn nor greedy, has probability 0 in log-likelihoods, entropies and KL divergences, and is
    never a target's maximum.

    Distributions per leaf: IntBox -> Categorical, BoolBox -> Bernoulli, unbounded FloatBox ->
    Normal, bounded FloatBox -> SquashedNormal (or Beta with ``bounded_distribution="beta"`` in
    ``action_adapter_spec``).

    Args:
        network_spec: The network (RLgraph's ``network_spec``: a list of layer specs, ...).
        action_space: The action space (the agent passes it).
        action_adapter_spec: Keys for every adapter (``pre_network_spec``, ``weights_spec``,
            ``bounded_distribution``, ...).
    """

    def __init__(
        self,
        network_spec: Any = None,
        action_space: Space | None = None,
        action_adapter_spec: dict[str, Any] | None = None,
        scope: str = "policy",
        **kwargs: Any,
    ) -> None:
        super().__init__(scope=scope, **kwargs)
        if action_space is None:
            raise SpecError("a policy needs the action space (agents pass it)", "action_space")
        self.space = action_space.strip_ranks()
        self.network = NeuralNetwork.from_spec(network_spec or [], path="network_spec", scope="network")
        self.leaves = _leaves(self.space)
        self.adapters: dict[str, ActionAdapter] = {}
        self.distributions: dict[str, Any] = {}
        for path, (_, leaf) in self.leaves.items():
            suffix = f"-{path.replace('/', '-')}" if path else ""
            adapter = _adapter(leaf, action_adapter_spec, suffix)
            self.adapters[path] = adapter
            self.distributions[path] = adapter.distribution()
            self.distributions[path].scope = f"{self.distributions[path].scope}{suffix}"
            self.add_components(adapter, self.distributions[path])
        self.ranks = [len(leaf.shape) for _, leaf in self.leaves.values()]
        #: Whether states may mask the actions: one IntBox action (see :mod:`rlgraph.spaces.masks`).
        self.maskable = isinstance(self.space, IntBox)

    # -- API ---------------------------------------------------------------------------------------
    @rlgraph.api
    def get_nn_outputs(self, nn_inputs: Any) -> Any:
        return self.network.call(nn_inputs)

    @rlgraph.api
    def get_distribution_parameters(self, nn_inputs: Any) -> Any:
        return self._nest(self._parameters_of(nn_inputs))

    @rlgraph.api
    def get_q_values(self, nn_inputs: Any) -> Any:
        """For IntBox actions, the Q-values ``(batch, *shape, n)``: the adapter's outputs (the
        categorical's logits). Other action spaces have none: the method (and any parent's API method
        calling it) is left out of the build, and calling it raises ``NotApplicableError``."""
        if not all(isinstance(leaf, IntBox) for _, leaf in self.leaves.values()):
            raise NotApplicableError(f"Q-values need IntBox actions; {self.global_scope!r} has {self.space}")
        return self._nest(self._parameters_of(nn_inputs))

    @rlgraph.api
    def get_action(self, nn_inputs: Any, deterministic: bool = False) -> Any:
        parameters = self._parameters_of(nn_inputs)
        return self._nest({p: self.distributions[p].draw(parameters[p], deterministic) for p in self.leaves})

    @rlgraph.api
    def get_action_and_log_prob(self, nn_inputs: Any, deterministic: bool = False) -> Any:
        return self._draws(
            nn_inputs, lambda distribution, p: distribution.draw_and_log_prob(p, deterministic)
        )

    @rlgraph.api
    def get_differentiable_action_and_log_prob(self, nn_inputs: Any, temperature: float = 1.0) -> Any:
        return self._draws(
            nn_inputs, lambda distribution, p: distribution.draw_differentiable_and_log_prob(p, temperature)
        )

    @rlgraph.api
    def get_log_prob(self, nn_inputs: Any, actions: Any) -> Any:
        parameters = self._parameters_of(nn_inputs)
        log_probs = [
            self.distributions[p].log_prob(parameters[p], _leaf(actions, keys))
            for p, (keys, _) in self.leaves.items()
        ]
        return self._graph_fn_sum_over_actions(*log_probs)

    @rlgraph.api
    def get_log_prob_and_entropy(self, nn_inputs: Any, actions: Any) -> Any:
        """``(log_prob(actions), entropy)`` per batch row, from one pass of the network (a policy-gradient
        loss needs both)."""
        parameters = self._parameters_of(nn_inputs)
        log_probs, entropies = [], []
        for path, (keys, _) in self.leaves.items():
            log_probs.append(self.distributions[path].log_prob(parameters[path], _leaf(actions, keys)))
            entropies.append(self.distributions[path].entropy(parameters[path]))
        return self._graph_fn_sum_over_actions(*log_probs), self._graph_fn_sum_over_actions(*entropies)

    @rlgraph.api
    def get_entropy(self, nn_inputs: Any) -> Any:
        parameters = self._parameters_of(nn_inputs)
        return self._graph_fn_sum_over_actions(
            *[self.distributions[p].entropy(parameters[p]) for p in self.leaves]
        )

    # -- routing helpers (used inside API methods) -----------------------------------------------------
    def _draws(self, nn_inputs: Any, draw: Any) -> Any:
        """``(actions, summed log-likelihoods)`` of ``draw(distribution, parameters)`` for every leaf."""
        parameters = self._parameters_of(nn_inputs)
        actions, log_probs = {}, []
        for path in self.leaves:
            actions[path], log_prob = draw(self.distributions[path], parameters[path])
            log_probs.append(log_prob)
        return self._nest(actions), self._graph_fn_sum_over_actions(*log_probs)

    def _parameters_of(self, nn_inputs: Any) -> dict[str, Any]:
        """Distribution parameters per leaf path for ``nn_inputs``, masked where they hold a mask."""
        parameters = self._parameters(self.network.call(nn_inputs))
        if self.maskable:
            parameters[""] = self._graph_fn_mask(parameters[""], nn_inputs)
        return parameters

    @rlgraph.graph_fn
    def _graph_fn_mask(self, logits: Any, nn_inputs: Any) -> Any:
        """The logits, a masked action's ``MASKED_LOGIT`` where ``nn_inputs`` hold an action mask."""
        mask = action_mask_of(nn_inputs)
        if mask is None:
            return logits
        ops = self.ops
        return ops.where(ops.cast(mask, "bool"), logits, ops.zeros_like(logits) + MASKED_LOGIT)

    def _parameters(self, nn_outputs: Any) -> dict[str, Any]:
        """Distribution parameters per leaf path (subclasses change how they are computed)."""
        return {path: adapter.get_parameters(nn_outputs) for path, adapter in self.adapters.items()}

    def _nest(self, by_path: dict[str, Any]) -> Any:
        return by_path[""] if "" in by_path else self.space.unflatten(by_path)

    @rlgraph.graph_fn
    def _graph_fn_sum_over_actions(self, *values: Any) -> Any:
        """Per batch row: the sum over every action dimension of every leaf."""
        ops, total = self.ops, None
        for value, rank in zip(values, self.ranks):
            if rank:
                value = ops.sum(value, axis=tuple(range(-rank, 0)))
            total = value if total is None else total + value
        return total


def _leaves(space: Space) -> dict[str, tuple[list[Any], Space]]:
    """Leaf path -> (the keys to index a nested value with, the leaf space)."""
    if not isinstance(space, ContainerSpace):
        return {"": ([], space)}
    found: dict[str, tuple[list[Any], Space]] = {}
    for key in space.keys() if isinstance(space, Dict) else range(len(space)):
        for path, (keys, leaf) in _leaves(space[key]).items():
            found["/".join(filter(None, (str(key), path)))] = ([key, *keys], leaf)
    return found


def _leaf(value: Any, keys: list[Any]) -> Any:
    for key in keys:
        value = value[key]
    return value


def _adapter(leaf: Space, spec: dict[str, Any] | None, suffix: str) -> ActionAdapter:
    spec = dict(spec or {})
    spec.setdefault("scope", "action-adapter")
    spec["scope"] = f"{spec['scope']}{suffix}"
    try:
        return ActionAdapter.from_spec(spec, action_space=leaf)
    except SpecError as error:
        raise rebase(error, "action_adapter_spec") from None
