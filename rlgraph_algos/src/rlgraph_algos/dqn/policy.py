"""DQN's policy role: what acting needs (preprocessing, the Q-network, epsilon-greedy exploration)."""

from __future__ import annotations

import rlgraph
from rlgraph.agents.roles import Role
from rlgraph.agents.root import AgentRoot, ExploringActing
from rlgraph_networks.explorations.exploration import Exploration
from rlgraph_networks.policies.policy import Policy
from rlgraph_networks.preprocessors.stack import PreprocessorStack


class DQNPolicyGraph(ExploringActing, AgentRoot):
    """Acting with a Q-network: greedy actions, explored (``use_exploration``) by ``exploration`` at
    ``time_step``; where the states hold an action mask, only allowed actions are taken."""

    def __init__(
        self,
        preprocessor: PreprocessorStack,
        policy: Policy,
        exploration: Exploration,
        scope: str,
        role: Role = Role.AGENT,
    ) -> None:
        super().__init__(scope=scope, role=role)
        self.preprocessor = preprocessor
        self.policy = policy
        self.exploration = exploration

    def greedy_actions(self, preprocessed_states):
        return self.policy.get_action(preprocessed_states, deterministic=True)

    @rlgraph.api
    def get_q_values(self, preprocessed_states):
        return self.policy.get_q_values(preprocessed_states)
