"""Every shipped agent takes one typed config: made from its keys or given whole, checked at once."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from rlgraph.agents import Agent, DQNAgent
from rlgraph.agents.config import AgentConfig, agent_argument, agent_config, agent_config_class, nested_spec
from rlgraph.agents.specs import UpdateSpec
from rlgraph.errors import SpecError
from rlgraph.plugins import list_plugins, load
from rlgraph.spaces import FloatBox, IntBox
from rlgraph_algos.dqn.config import ApexConfig, DQNConfig
from rlgraph_algos.impala.config import IMPALAConfig

CARTPOLE = {"state_space": FloatBox(shape=(4,)), "action_space": IntBox(2)}
AGENTS = sorted(info.name for info in list_plugins("rlgraph.agents") if info.status in ("ok", "loaded"))


@pytest.mark.parametrize("name", AGENTS)
def test_every_shipped_agent_names_its_own_config(name):
    agent_class = load("rlgraph.agents", name)
    config_class = agent_config_class(agent_class)
    assert issubclass(config_class, AgentConfig) and config_class is vars(agent_class).get("config_class")
    assert config_class.agent == agent_class.__name__
    default_name = attrs.fields_dict(config_class)["name"].default
    assert default_name != "agent" and default_name.endswith("-agent")


def test_an_agent_is_made_from_its_config_as_from_its_keys(rlgraph_backend):
    keys = {**CARTPOLE, "n_step": 2, "update_spec": {"batch_size": 8}, "backend": rlgraph_backend}
    config = DQNConfig(**keys)
    from_config, from_keys = DQNAgent(config), DQNAgent(**keys)
    assert from_config.config is config and from_keys.config == config
    assert from_config.n_step == 2 and from_config.update_spec.batch_size == 8
    assert from_config.get_weights().keys() == from_keys.get_weights().keys()


def test_a_config_and_keys_together_or_another_algorithms_config_are_refused():
    config = DQNConfig(**CARTPOLE, auto_build=False)
    with pytest.raises(TypeError, match="give a config or keys, not both"):
        DQNAgent(config, n_step=3)
    with pytest.raises(TypeError, match="DQNAgent takes a DQNConfig, got IMPALAConfig"):
        DQNAgent(IMPALAConfig(**CARTPOLE, auto_build=False))
    assert isinstance(ApexConfig(**CARTPOLE), DQNConfig)  # Ape-X's DQN takes its own, a DQN config


def test_every_problem_of_a_spec_is_reported_at_once():
    with pytest.raises(SpecError) as error:
        Agent.from_spec(
            {
                "type": "dqn",
                **CARTPOLE,
                "role": "lerner",
                "n_step": 0,
                "internal_states_space": FloatBox(shape=(2,)),
                "update_spec": {"num_iterations": 3},
                "dueling_q": False,
                "policy_spec": {"type": "dueling-policy"},
            }
        )
    found = {problem.path: problem.message for problem in error.value.problems}
    assert set(found) == {
        "role",
        "n_step",
        "internal_states_space",
        "update_spec.num_iterations",
        "dueling_q",
    }
    assert found["role"] == "unknown role 'lerner': one of policy, worker, learner, agent"
    assert "contradicts policy_spec.type 'dueling-policy'" in found["dueling_q"]


def test_a_config_holds_the_algorithms_defaults_and_the_catalog_lists_them_first():
    fields = [field.name for field in attrs.fields(ApexConfig)]
    assert fields[:2] == ["state_space", "action_space"] and fields[2] == "double_q"
    assert fields[-4:] == ["backend", "auto_build", "name", "role"]
    config = ApexConfig(**CARTPOLE)
    assert config.n_step == 3 and config.memory_spec["type"] == "prioritized_replay"
    assert IMPALAConfig.unknown_key_message("weight_vf").startswith("IMPALA weights its value loss")


def test_sync_rules_are_translated_into_the_update_spec_where_the_config_is_made():
    from rlgraph_algos.actor_critic_q.config import SACConfig

    spaces = {"state_space": FloatBox(shape=(3,)), "action_space": FloatBox(-1.0, 1.0, shape=(1,))}
    config = SACConfig(**spaces, sync_rules={"sync_every_n_updates": 2, "sync_tau": 0.01})
    assert (config.update_spec.sync_interval, config.update_spec.sync_tau) == (8, 0.01)
    assert SACConfig(**spaces).update_spec.sync_tau == 0.005  # the papers' soft update by default


def test_rlgraphs_other_names_are_translated_in_one_place_where_a_config_is_made_from_keys():
    agent = DQNAgent(**CARTPOLE, memory_batch_size=8, python_buffer_size=2, auto_build=False)
    assert (agent.update_spec.batch_size, agent.observe_spec.buffer_size) == (8, 2)
    config = DQNConfig.from_keys({**CARTPOLE, "memory_batch_size": 16})
    assert config.update_spec.batch_size == 16 and "update_spec" in config._given
    from rlgraph_algos.actor_critic_q.config import SACConfig

    spaces = {"state_space": FloatBox(shape=(3,)), "action_space": FloatBox(-1.0, 1.0, shape=(1,))}
    sac = SACConfig.from_keys({**spaces, "q_function_spec": [{"type": "dense", "units": 8}]})
    assert sac.value_function_spec == [{"type": "dense", "units": 8}]
    with pytest.raises(SpecError, match="'memory_batch_size' and 'update_spec.batch_size' name the same key"):
        DQNConfig.from_keys({**CARTPOLE, "memory_batch_size": 16, "update_spec": {"batch_size": 8}})
    assert "memory_batch_size" not in {field.name for field in attrs.fields(DQNConfig)}


def test_a_discount_given_as_none_is_the_default():
    assert DQNConfig(**CARTPOLE, discount=None).discount == 0.98
    assert DQNAgent(**CARTPOLE, discount=None, auto_build=False).discount == 0.98


def test_subclasses_of_shipped_agents_extend_their_keys_or_take_their_own_in_a_constructor():
    from rlgraph_algos.policy_gradient.agent import PolicyGradientAgent, PPOAgent
    from rlgraph_algos.policy_gradient.config import PPOConfig

    @agent_config
    class ExploringPPOConfig(PPOConfig):
        exploration_spec: Any = agent_argument("exploration_spec")
        update_spec: UpdateSpec | None = nested_spec(
            UpdateSpec, uses=("batch_size", "num_iterations", "sample_size", "sync_tau")
        )

    class ExploringPPO(PPOAgent):
        config_class = ExploringPPOConfig

    agent = ExploringPPO.from_spec(
        {
            **CARTPOLE,
            "exploration_spec": {},
            "update_spec": {"sync_tau": 0.5, "num_iterations": 2},
            "auto_build": False,
        }
    )
    assert agent.exploration_spec == {} and agent.update_spec.num_iterations == 2
    assert agent.config.clip_ratio == 0.2  # PPO's keys stay

    class Counting(DQNAgent):
        def __init__(self, count: int = 1, **keys):
            self.count = count
            super().__init__(**keys)

    counting = Counting.from_spec(
        {
            **CARTPOLE,
            "count": 3,
            "python_buffer_size": 2,
            "observe_spec": {"buffer_enabled": True},
            "auto_build": False,
        }
    )
    assert counting.count == 3 and counting.observe_spec.buffer_size == 2

    class Bare(PolicyGradientAgent):  # a base's subclass: its config has no weight_vf
        pass

    assert Bare(**CARTPOLE, auto_build=False).builder.value_loss_weight() == 0.5


def test_values_of_a_config_made_in_python_are_checked_too():
    from rlgraph_algos.actor_critic_q.config import SACConfig

    spaces = {"state_space": FloatBox(shape=(3,)), "action_space": FloatBox(-1.0, 1.0, shape=(1,))}
    with pytest.raises(SpecError, match=r"^discrete_mode: must be one of"):
        SACConfig(**spaces, discrete_mode="bogus")
    with pytest.raises(SpecError, match=r"^sync_rules: expected a dict"):
        SACConfig(**spaces, sync_rules=5)
    with pytest.raises(SpecError, match=r"^architecture: must be one of"):
        IMPALAConfig(**CARTPOLE, architecture="tiny")
    config = SACConfig(**spaces, sync_rules={"sync_every_n_updates": 2})
    assert attrs.evolve(config).update_spec == config.update_spec  # translated once, held in one form


def test_the_conservative_penalty_is_checked_and_refused_where_it_would_not_apply():
    from rlgraph_algos.dqn.config import CategoricalDQNConfig

    assert DQNConfig(**CARTPOLE, cql_alpha=1.0).cql_alpha == 1.0
    with pytest.raises(SpecError, match=r"^cql_alpha: "):
        DQNConfig(**CARTPOLE, cql_alpha=-1.0)
    with pytest.raises(
        SpecError, match=r"^cql_alpha: does not apply: a distributional DQN's loss is its own"
    ):
        CategoricalDQNConfig(**CARTPOLE, cql_alpha=1.0)
