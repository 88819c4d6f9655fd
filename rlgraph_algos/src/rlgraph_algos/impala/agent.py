"""The IMPALA agent (Espeholt et al., 2018): an actor-critic learning from rollouts of older policies,
corrected by V-trace."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from rlgraph.agents.records import INTERNALS, NEXT_INTERNALS
from rlgraph.agents.roles import Role
from rlgraph.components import Component
from rlgraph.errors import SpecError
from rlgraph.executors.executor import check_positive_ints
from rlgraph.spaces import BoxSpace
from rlgraph_algos.impala.graph import IMPALAGraph, RecurrentIMPALAGraph
from rlgraph_algos.impala.networks import impala_network
from rlgraph_algos.impala.vtrace import VTrace
from rlgraph_algos.policy_gradient.agent import ActorCriticAgent, sequence_ends

DEFAULT_QUEUE = {"capacity": 256}


class IMPALAAgent(ActorCriticAgent):
    """IMPALA with RLgraph's keys: actors sample rollouts of ``worker_sample_size`` steps per environment
    with the weights they last received (the behaviour policy, whose log-likelihoods each step's record
    keeps), and the learner updates on batches of them with V-trace's targets and advantages.

    One gradient step per update on the whole batch: the actor-critic loss with V-trace's advantages
    (``weight_pg``, ``weight_entropy``) plus ``0.5 * weight_baseline * (V(x) - v)^2`` toward V-trace's
    targets. The current policy's log-likelihoods and values for V-trace are taken one graph call before
    the step (a recurrent policy's one step from the states each step was acted with).

    Learning in one process (``rlgraph train`` with the local executor) updates on each environment's most
    recent steps as the actor-critic does: on-policy, where V-trace's weights are 1. The ``impala``
    executors (:mod:`rlgraph.executors.actor_processes`, and rlgraph-ray's) run actors apart from the learner,
    with a FIFO queue of rollouts (``fifo_queue_spec``) between them.

    Args (RLgraph's keys):
        worker_sample_size: Time steps per environment in one actor rollout.
        fifo_queue_spec: ``{"capacity": N}``: rollouts the queue holds; actors wait while it is full.
        weight_pg, weight_baseline, weight_entropy: The loss terms' weights.
        rho_bar, c_bar, rho_bar_pg: V-trace's truncations (1 in the paper).
        architecture: ``"small"`` or ``"large"``: the paper's shallow or deep residual network for image
            states (``(height, width, channels)`` after preprocessing), an LSTM of 256 units on top
            (:func:`~rlgraph_algos.impala.networks.impala_network`); instead of ``network_spec``.
        **kwargs: :class:`~rlgraph_algos.policy_gradient.agent.PolicyGradientAgent`'s and the Agent's.
    """

    roles_built: ClassVar[frozenset[Role]] = ActorCriticAgent.roles_built

    def __init__(
        self,
        worker_sample_size: int = 100,
        fifo_queue_spec: dict[str, Any] | None = None,
        weight_pg: float = 1.0,
        weight_baseline: float = 0.5,
        weight_entropy: Any = 0.01,
        rho_bar: float = 1.0,
        c_bar: float = 1.0,
        rho_bar_pg: float = 1.0,
        architecture: str | None = None,
        name: str = "impala-agent",
        **kwargs: Any,
    ) -> None:
        if architecture is not None:
            if kwargs.get("network_spec") is not None:
                raise SpecError("give network_spec or an architecture, not both", "architecture")
            kwargs["network_spec"] = impala_network(architecture)
        self.architecture = architecture
        if "weight_vf" in kwargs:
            raise SpecError("IMPALA weights its value loss with weight_baseline (RLgraph's key)", "weight_vf")
        check_positive_ints(worker_sample_size=worker_sample_size)
        self.worker_sample_size = worker_sample_size
        self.queue_capacity = _queue_capacity(fifo_queue_spec)
        self.vtrace_settings = {"rho_bar": rho_bar, "c_bar": c_bar, "rho_bar_pg": rho_bar_pg}
        VTrace(**self.vtrace_settings)  # bad settings fail here, naming their key
        super().__init__(
            weight_pg=weight_pg, weight_vf=weight_baseline, weight_entropy=weight_entropy, name=name, **kwargs
        )

    def build_root(self) -> Component:
        root = super().build_root()
        space = self.preprocessed_state_space
        if self.architecture is not None and (not isinstance(space, BoxSpace) or len(space.shape) != 3):
            raise SpecError(
                f"the {self.architecture} network takes images (height, width, channels), but the preprocessed "
                f"states are {space}: preprocess them into images, or give a network_spec",
                "architecture",
            )
        return root

    def graph_classes(self) -> tuple[type, type]:
        return IMPALAGraph, RecurrentIMPALAGraph

    def graph_components(self) -> dict[str, Component]:
        return {"v_trace": VTrace(self.discount, **self.vtrace_settings)}

    def input_spaces(self) -> dict[str, Any]:
        from rlgraph.spaces import FloatBox

        spaces = super().input_spaces()
        spaces["log_rhos"] = FloatBox(add_batch_rank=True, add_time_rank=True, time_major=True)
        return spaces

    def estimate(
        self, rollout: dict[str, Any], mask: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """V-trace's advantages and value targets, with the values they start from."""
        log_probs, values = self._per_step(
            "get_log_probs_and_values", rollout["states"], rollout.get(INTERNALS), rollout["actions"]
        )
        next_values = self.state_values(rollout["next_states"], rollout.get(NEXT_INTERNALS))
        log_rhos = np.where(mask, log_probs - rollout["log_probs"], 0.0).astype(np.float32)
        value_targets, advantages = self._execute(
            "vtrace",
            log_rhos,
            rollout["rewards"],
            values,
            next_values,
            rollout["terminals"],
            sequence_ends(rollout, mask),
        )
        return advantages, value_targets, values


def _queue_capacity(spec: dict[str, Any] | None) -> int:
    spec = dict(DEFAULT_QUEUE if spec is None else spec)
    kind = str(spec.pop("type", "fifo_queue")).replace("-", "_").lower()
    if kind != "fifo_queue":
        raise SpecError(
            f"IMPALA's actors and learner share a FIFO queue; got type {kind!r}", "fifo_queue_spec.type"
        )
    capacity = spec.pop("capacity", DEFAULT_QUEUE["capacity"])
    if spec:
        raise SpecError(f"unknown key(s) {sorted(spec)}; a FIFO queue takes capacity", "fifo_queue_spec")
    check_positive_ints(**{"fifo_queue_spec.capacity": capacity})
    return capacity
