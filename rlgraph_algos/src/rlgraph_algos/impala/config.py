"""IMPALA's config: the policy-gradient keys and RLgraph's IMPALA keys."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import attrs

from rlgraph.agents.config import agent_config, one_of, raised
from rlgraph.errors import SpecError
from rlgraph.specs.checks import check_of, non_negative, positive_int
from rlgraph.specs.validation import Problem
from rlgraph_algos.impala.vtrace import VTrace
from rlgraph_algos.policy_gradient.config import PolicyGradientConfig

DEFAULT_QUEUE = {"capacity": 256}


@agent_config
class IMPALAConfig(PolicyGradientConfig):
    """IMPALA's keys (RLgraph's): the policy-gradient keys, ``worker_sample_size`` (time steps per environment
    in one actor rollout), ``fifo_queue_spec`` (``{"capacity": N}``: rollouts the queue between actors and
    learner holds), ``weight_pg``, ``weight_baseline`` and ``weight_entropy`` (the loss terms' weights),
    ``rho_bar``, ``c_bar`` and ``rho_bar_pg`` (V-trace's truncations, 1 in the paper) and ``architecture``
    (``"small"`` or ``"large"``: the paper's network for image states, instead of ``network_spec``)."""

    agent: ClassVar[str] = "IMPALAAgent"

    worker_sample_size: int = attrs.field(default=100, metadata=check_of(positive_int))
    fifo_queue_spec: dict[str, Any] | None = attrs.field(factory=lambda: dict(DEFAULT_QUEUE))
    weight_pg: float = 1.0
    weight_baseline: float = attrs.field(default=0.5, metadata=check_of(non_negative))
    weight_entropy: Any = 0.01
    rho_bar: float = 1.0
    c_bar: float = 1.0
    rho_bar_pg: float = 1.0
    architecture: Literal["small", "large"] | None = attrs.field(
        default=None, metadata={"check": one_of(("small", "large"))}
    )
    name: str = "impala-agent"

    algorithm: ClassVar[str] = "IMPALA"
    own_loss_keys: ClassVar[tuple[str, ...]] = ("weight_pg", "weight_entropy")
    loss_settings: ClassVar[tuple[str, ...]] = ("weight_baseline",)
    refused_loss_inputs: ClassVar[dict[str, str]] = {
        "prev_log_probs": "its V-trace advantages carry the importance weights of the actors' policy already, "
        "and a loss of the ratio to that policy would weight them twice"
    }

    def contradictions(self) -> list[Problem]:
        problems = super().contradictions() + raised(queue_capacity, self.fifo_queue_spec)
        problems += raised(VTrace, **self.vtrace_settings())
        if self.architecture is not None and self.network_spec is not None:
            problems.append(Problem("architecture", "give network_spec or an architecture, not both"))
        return problems

    def vtrace_settings(self) -> dict[str, float]:
        """V-trace's truncations, by VTrace's argument names."""
        return {"rho_bar": self.rho_bar, "c_bar": self.c_bar, "rho_bar_pg": self.rho_bar_pg}

    @classmethod
    def unknown_key_message(cls, key: str) -> str | None:
        if key == "weight_vf":
            return "IMPALA weights its value loss with weight_baseline (RLgraph's key)"
        return super().unknown_key_message(key)


def queue_capacity(spec: dict[str, Any] | None) -> int:
    """The capacity of IMPALA's FIFO queue spec (``{"capacity": N}``)."""
    spec = dict(DEFAULT_QUEUE if spec is None else spec)
    kind = str(spec.pop("type", "fifo_queue")).replace("-", "_").lower()
    if kind != "fifo_queue":
        raise SpecError(
            f"IMPALA's actors and learner share a FIFO queue; got type {kind!r}", "fifo_queue_spec.type"
        )
    capacity = spec.pop("capacity", DEFAULT_QUEUE["capacity"])
    if spec:
        raise SpecError(f"unknown key(s) {sorted(spec)}; a FIFO queue takes capacity", "fifo_queue_spec")
    return positive_int(capacity, "fifo_queue_spec.capacity")
