"""A tabular Q-learning agent built from components: exercises the Agent API on any backend."""

from __future__ import annotations

from typing import ClassVar

import rlgraph
from rlgraph.agents import Agent
from rlgraph.agents.builder import Builder
from rlgraph.agents.config import GenericAgentConfig, agent_config
from rlgraph.agents.roles import Role
from rlgraph.components import Component


class QTable(Component):
    """Q-values in a table, an epsilon-greedy act, and a replay of the last ``capacity`` transitions."""

    def __init__(
        self,
        num_states: int,
        num_actions: int,
        capacity: int,
        learning_rate: float,
        discount: float,
        epsilon: float,
        scope: str = "q-table",
    ):
        super().__init__(scope=scope)
        self.num_states, self.num_actions, self.capacity = num_states, num_actions, capacity
        self.learning_rate, self.discount, self.epsilon = learning_rate, discount, epsilon

    def create_variables(self, input_spaces, action_space=None):
        self.q = self.get_variable("q", shape=(self.num_states, self.num_actions))
        self.states = self.get_variable(
            "memory/states", shape=(self.capacity,), dtype="int64", trainable=False
        )
        self.actions = self.get_variable(
            "memory/actions", shape=(self.capacity,), dtype="int64", trainable=False
        )
        self.rewards = self.get_variable("memory/rewards", shape=(self.capacity,), trainable=False)
        self.terminals = self.get_variable(
            "memory/terminals", shape=(self.capacity,), dtype=bool, trainable=False
        )
        self.next_states = self.get_variable(
            "memory/next_states", shape=(self.capacity,), dtype="int64", trainable=False
        )
        self.size = self.get_variable("memory/size", shape=(), dtype="int64", trainable=False)
        self.index = self.get_variable("memory/index", shape=(), dtype="int64", trainable=False)

    @rlgraph.api
    def act(self, states, use_exploration=True):
        return self._graph_fn_act(states, use_exploration)

    @rlgraph.api
    def insert(self, states, actions, rewards, terminals, next_states):
        return self._graph_fn_insert(states, actions, rewards, terminals, next_states)

    @rlgraph.api
    def learn(self):
        return self._graph_fn_learn()

    @rlgraph.graph_fn(batched=True)
    def _graph_fn_act(self, states, use_exploration):
        ops = self.ops
        greedy = ops.argmax(ops.gather(ops.read(self.q), states), axis=-1)
        if not use_exploration:
            return greedy
        n = ops.shape(states)[0]
        explore = ops.random_uniform((n,)) < self.epsilon
        return ops.where(explore, ops.random_int((n,), 0, self.num_actions), greedy)

    @rlgraph.graph_fn
    def _graph_fn_insert(self, states, actions, rewards, terminals, next_states):
        ops = self.ops
        n = ops.shape(states)[0]
        slots = (ops.arange(n) + ops.read(self.index)) % self.capacity
        for variable, values in (
            (self.states, states),
            (self.actions, actions),
            (self.rewards, rewards),
            (self.terminals, terminals),
            (self.next_states, next_states),
        ):
            ops.scatter_update(variable, slots, values)
        ops.assign(self.index, (ops.read(self.index) + n) % self.capacity)
        return ops.assign(self.size, ops.minimum(ops.read(self.size) + n, self.capacity))

    @rlgraph.graph_fn
    def _graph_fn_learn(self):
        ops = self.ops
        size = ops.read(self.size)
        s, a = ops.read(self.states)[:size], ops.read(self.actions)[:size]
        r, t, s2 = (
            ops.read(self.rewards)[:size],
            ops.read(self.terminals)[:size],
            ops.read(self.next_states)[:size],
        )
        q = ops.read(self.q)
        target = r + self.discount * ops.max(ops.gather(q, s2), axis=-1) * (1.0 - ops.cast(t, "float32"))
        rows = ops.gather(q, s)
        td = target - ops.take_along_axis(rows, ops.expand_dims(a, -1), axis=-1)[:, 0]
        # Each (state, action) pair moves by the mean TD error of its transitions: a pair drawn twice
        # (or a state drawn with two actions) loses no update, whatever order a backend writes in.
        states, actions = ops.one_hot(s, self.num_states), ops.one_hot(a, self.num_actions)
        counts = ops.matmul(ops.transpose(states), actions)
        sums = ops.matmul(ops.transpose(states), actions * ops.expand_dims(td, -1))
        ops.assign(self.q, q + self.learning_rate * sums / ops.maximum(counts, 1.0))
        return {"loss": ops.mean(ops.square(td)), "max_td_error": ops.max(ops.abs(td))}


class TabularRoot(Component):
    def __init__(self, table: QTable):
        super().__init__(scope="tabular-q")
        self.table = table

    @rlgraph.api
    def get_actions(self, states, use_exploration=True, apply_preprocessing=True):
        return {"actions": self.table.act(states, use_exploration)}

    @rlgraph.api
    def observe(self, records):
        return self.table.insert(
            records["states"],
            records["actions"],
            records["rewards"],
            records["terminals"],
            records["next_states"],
        )

    @rlgraph.api
    def update(self):
        return self.table.learn()


@agent_config
class TabularQConfig(GenericAgentConfig):
    """Every key of the base, and the table's: its learning rate, its epsilon-greedy act and its replay's size."""

    agent: ClassVar[str] = "TabularQAgent"
    learning_rate: float = 0.5
    epsilon: float = 0.2
    capacity: int = 64


class TabularBuilder(Builder):
    """A table of the state and action spaces' sizes, in one root for every role."""

    def root(self, role: Role) -> Component:
        config = self.config
        table = QTable(
            self.state_space.num_categories,
            self.action_space.num_categories,
            config.capacity,
            config.learning_rate,
            config.discount,
            config.epsilon,
        )
        return TabularRoot(table)


class TabularQAgent(Agent[TabularQConfig, TabularBuilder]):
    """Q-learning on a table: for discrete state and action spaces."""

    config_class = TabularQConfig
    builder_class = TabularBuilder
