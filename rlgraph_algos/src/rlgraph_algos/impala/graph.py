"""The root components of the IMPALA agent: policy-gradient graphs with V-trace targets."""

from __future__ import annotations

from typing import Any

import rlgraph
from rlgraph_algos.impala.vtrace import VTrace
from rlgraph_algos.policy_gradient.graph import PolicyGradientGraph, RecurrentPolicyGradientGraph


class VTraceTargets:
    """The ``vtrace`` API method of the IMPALA graphs: V-trace's value targets and policy-gradient
    advantages of time-major rollouts (:class:`~rlgraph_algos.impala.vtrace.VTrace`, ``v_trace``)."""

    v_trace: VTrace | None

    @rlgraph.api(needs="v_trace")
    def vtrace(
        self, log_rhos, rollout_rewards, rollout_values, rollout_next_values, rollout_terminals, sequence_ends
    ):
        return self.v_trace.targets(
            log_rhos, rollout_rewards, rollout_values, rollout_next_values, rollout_terminals, sequence_ends
        )


class IMPALAGraph(VTraceTargets, PolicyGradientGraph):
    """:class:`PolicyGradientGraph` with ``vtrace`` and ``get_log_probs_and_values(preprocessed_states,
    actions)``: the current policy's log-likelihoods of the actions taken and the baseline's values."""

    def __init__(self, v_trace: VTrace | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.v_trace = v_trace

    @rlgraph.api(needs="value_function")
    def get_log_probs_and_values(self, preprocessed_states, actions):
        return self.policy.get_log_prob(preprocessed_states, actions), self._values(preprocessed_states)


class RecurrentIMPALAGraph(VTraceTargets, RecurrentPolicyGradientGraph):
    """:class:`RecurrentPolicyGradientGraph` with ``vtrace`` and ``get_log_probs_and_values(
    preprocessed_states, internals, rollout_actions)``: time-major steps and their actions, each taken one
    step from its own internal states (the states it was acted with); outputs ``(T * B,)``."""

    def __init__(self, v_trace: VTrace | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.v_trace = v_trace

    @rlgraph.api(needs="value_function")
    def get_log_probs_and_values(self, preprocessed_states, internals, rollout_actions):
        policy_inputs, value_inputs = self._one_step_inputs(preprocessed_states, internals)
        actions = self._graph_fn_merge_time(rollout_actions)
        return self.policy.get_log_prob(policy_inputs, actions), self._values(value_inputs)
