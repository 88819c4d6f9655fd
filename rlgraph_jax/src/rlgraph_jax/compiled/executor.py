"""The ``compiled`` executor: environment steps, acting and learning as one XLA program, for a population of
agents at once."""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from rlgraph.agents.plans import ReplayPlan, RolloutPlan
from rlgraph.errors import NonFiniteError, NotApplicableError, SpecError
from rlgraph.executors.executor import EpisodeCallback, Executor, Workload, check_positive_ints, resume_seed
from rlgraph.executors.local import build_agent
from rlgraph.graph.checks import OVERFLOWING_MAGNITUDE
from rlgraph.graph.compiling import CompileClock
from rlgraph.plugins.providers import install_hint
from rlgraph.training.evaluation import EPISODE_STEP_LIMIT, EvaluationResult
from rlgraph_jax.compile import compilation_cache_dir
from rlgraph_jax.compiled.environments import greedy_episodes
from rlgraph_jax.compiled.graph import PureGraph
from rlgraph_jax.compiled.placement import Placement
from rlgraph_jax.compiled.replay import ReplayLoop
from rlgraph_jax.compiled.rollouts import RolloutLoop
from rlgraph_jax.compiled.settings import FloatPath, float_differences, label

#: The loop of each kind of plan.
LOOPS = {RolloutPlan: RolloutLoop, ReplayPlan: ReplayLoop}

RLGRAPH_PLUGIN_API = "3.0"


def functional_hint() -> str:
    """Why the compiled executor refuses an environment that is not functional, and what to use instead."""
    return (
        "the compiled executor steps the environment inside its program, so it needs one written as pure "
        f"functions (Environment.functional()): `{install_hint('rlgraph-gymnax')}` and give "
        "environment: {type: gymnax, env_id: CartPole-v1}"
    )


class CompiledExecutor(Executor):
    """Trains ``population`` agents of one spec, each with ``num_environments`` environments of its own, in
    one XLA program per chunk of training (Podracer's Anakin architecture).

    The environment must be functional (:meth:`~rlgraph.environments.Environment.functional`: gymnax's); the
    agent is built once on JAX, and its root API methods, unchanged, run inside the program as its
    :meth:`~rlgraph.agents.Agent.training_plan` describes (:mod:`rlgraph_jax.compiled.rollouts`,
    :mod:`rlgraph_jax.compiled.replay`). The members are the same graph with a state each, mapped over with
    ``jax.vmap`` and split over the devices; member ``i`` starts as the agent built with seed ``seed + i``
    would. ``member_configs``: each member's agent config, where members differ in settings (the floats
    those change ride in each member's state: :mod:`rlgraph_jax.compiled.settings`). Its counts
    (:attr:`timesteps`, :attr:`updates`) are each member's; :attr:`episodes` sums them. :meth:`evaluate_members` plays greedy episodes inside a program
    too; :meth:`store_member` writes one member's ordinary checkpoint.

    Programs compile at their first call (their seconds: :attr:`compile_seconds`) and are kept in JAX's
    persistent compilation cache (rlgraph-jax sets one up), so a second run of the same spec loads them.
    """

    trains_population: ClassVar[bool] = True

    def __init__(
        self,
        environment_spec: Any,
        agent_config: Any,
        num_environments: int = 1,
        seed: int | None = None,
        episode_finish_callback: EpisodeCallback | None = None,
        population: int = 1,
        member_configs: Sequence[Any] | None = None,
    ) -> None:
        super().__init__(environment_spec, agent_config, seed)
        check_positive_ints(num_environments=num_environments, population=population)
        configs = [agent_config] * population if member_configs is None else list(member_configs)
        if len(configs) != population:
            raise SpecError(f"{len(configs)} member configs for a population of {population}", "population")
        self.episode_finish_callback = episode_finish_callback
        #: The whole loop's state (every member's graph, environments and counters), set by the build.
        self.state: Any = None
        self.clock = CompileClock("compiled training", "JAX", compilation_cache_dir())
        environment = _make_environment(environment_spec)
        try:
            functional = environment.functional()
            if functional is None:
                raise SpecError(f"{environment!r} is not functional: {functional_hint()}", "environment")
            #: The agent of each distinct member config, the first member's first (the one that runs).
            distinct = {_key(config): config for config in configs}
            agents = {
                key: build_agent(_on_jax(config), environment, seed) for key, config in distinct.items()
            }
        finally:
            environment.terminate()
        self._agent = agents[_key(configs[0])]
        self.env = functional
        self.plan = plan = self._agent.training_plan(num_environments)
        refuse_host_state(self._agent)
        others = [agent for key, agent in agents.items() if key != _key(configs[0])]
        self.graph = PureGraph(self._agent, self._tunables(others, num_environments))
        self.loop = LOOPS[type(plan)](self.graph, functional, plan, num_environments)
        base = int(np.random.default_rng().integers(2**31)) if seed is None else int(seed)
        #: Each member's seed (member ``i``: the run's seed plus ``i``).
        self.member_seeds = [base + i for i in range(population)]
        for other in others:
            self._check_setting(other, base)
        loop = self.loop
        #: Where the members lie (split over the devices where there are several).
        self.placement = Placement(population)
        starts = [
            loop.start(self.graph.seeded_state(s, agents[_key(c)]), s)
            for s, c in zip(self.member_seeds, configs)
        ]
        self._place(loop.initial(starts))
        self._timesteps = self._updates = 0
        self._episodes = np.zeros(population, np.int64)
        self.update_seconds = 0.0
        self._programs: dict[Any, Any] = {}
        self._chunk: int | None = None

    def _tunables(self, others: list[Any], num_environments: int) -> list[FloatPath]:
        """The floats in which the other members' agents differ from the first's (a NotApplicableError naming
        what else a setting changes)."""
        paths: dict[FloatPath, None] = {}
        for other in others:
            try:
                if other.training_plan(num_environments) != self.plan:
                    raise NotApplicableError(
                        "the setting changes the training loop's plan (its schedule or shapes)"
                    )
                paths.update(dict.fromkeys(float_differences(self._agent, other)))
            except NotApplicableError as error:
                raise NotApplicableError(
                    f"members cannot differ in that setting within one program: {error}"
                ) from None
        return list(paths)

    def _check_setting(self, other: Any, seed: int) -> None:
        """Train one member with ``other``'s settings both ways, briefly: this program with the differing floats
        carried as data, and ``other``'s own graph; a setting the floats do not carry (a value a component
        captured elsewhere) would make them part ways."""
        plan, env = self.plan, self.env
        theirs_graph = PureGraph(other)
        theirs = LOOPS[type(plan)](theirs_graph, env, plan, self.loop.envs.size)
        length = 1
        if isinstance(plan, ReplayPlan):  # up to the first updates
            length = (plan.steps_before_update + 2 * plan.update_interval) // theirs.steps_per_iteration + 1
        results = []
        for loop, graph in ((self.loop, self.graph), (theirs, theirs_graph)):
            state = loop.initial([loop.start(graph.seeded_state(seed, other), seed)])
            self.clock.start()
            try:
                trained, _ = jax.jit(lambda s, loop=loop: loop.train(s, length))(state)
            except jax.errors.JAXTypeError as error:  # a tunable in Python's control flow, say
                labels = ", ".join(label(self._agent, path) for path in self.graph.tunables)
                raise NotApplicableError(
                    f"members cannot differ in that setting within one program: {labels} cannot be carried as "
                    f"data ({type(error).__name__}: {str(error).splitlines()[0]})"
                ) from None
            finally:
                self.clock.stop()
            results.append(jax.device_get(loop.graphs(trained)[: len(graph.variables)]))
        for variable, mine, expected in zip(self.graph.variables, *results):
            if not np.allclose(mine, expected, rtol=1e-4, atol=1e-5):
                labels = ", ".join(label(self._agent, path) for path in self.graph.tunables)
                raise NotApplicableError(
                    f"members cannot differ in that setting within one program: with {labels} carried as data, "
                    f"{variable.name} trains otherwise than in an agent built with it"
                )

    # -- counts ---------------------------------------------------------------------------------------------------
    @property
    def agent(self) -> Any:
        return self._agent

    @property
    def population(self) -> int:
        return len(self.member_seeds)

    @property
    def timesteps(self) -> int:
        """Time steps each member has trained."""
        return self._timesteps

    @property
    def episodes(self) -> int:
        return int(self._episodes.sum())

    @property
    def updates(self) -> int:
        """Updates each member has made."""
        return self._updates

    @property
    def compile_seconds(self) -> float:
        """Seconds spent compiling this executor's programs (or loading them from the cache)."""
        return self.clock.seconds

    # -- training -----------------------------------------------------------------------------------------------
    def execute_workload(self, workload: Workload | Mapping[str, Any]) -> dict[str, Any]:
        """Train every member ``num_timesteps`` time steps (whole iterations: rounded up to them). The result's
        ``members`` hold each member's episodes and mean loss (None without an update); ``timesteps_executed``
        and ``updates_executed`` are each member's, the episodes, frames and rewards every member's. A member
        whose loss was not finite stops training (:class:`~rlgraph.errors.NonFiniteError`)."""
        workload = Workload.of(workload)
        if workload.frameskip != 1:
            raise NotApplicableError(
                "the compiled executor steps every frame: give frameskip 1 (or use the local executor)"
            )
        if workload.report_interval is not None:
            raise NotApplicableError(
                "the compiled executor reports once per workload: give no report_interval (the population's "
                "trainer writes each member's progress rows)"
            )
        self._cut_episodes(workload.max_timesteps_per_episode or None)
        steps = self.loop.steps_per_iteration
        iterations = math.ceil(workload.num_timesteps / steps)
        self._chunk = self._chunk or iterations
        start, compiling, updates = time.perf_counter(), self.clock.seconds, self._updates
        reports = []
        for length in _lengths(iterations, self._chunk):
            self.state, report = self._run("train", length, self.state)
            reports.append(report)
        reports = jax.device_get(reports)
        runtime = time.perf_counter() - start - (self.clock.seconds - compiling)  # compiles apart
        self.update_seconds += runtime
        self._timesteps += iterations * steps
        self._updates = self.loop.counters(self.state).get("updates", self._updates + iterations)
        members = [_member_result(reports, index) for index in range(self.population)]
        _refuse_non_finite(members, self.member_seeds)
        self._announce(members)
        rewards = [r for member in members for r in member["episode_rewards"]]
        frames = iterations * steps * self.population
        losses = [member["loss"] for member in members if member["loss"] is not None]
        return {
            "timesteps_executed": iterations * steps,
            "episodes_executed": sum(len(member["episode_rewards"]) for member in members),
            "updates_executed": self._updates - updates,
            "runtime": runtime,
            "update_seconds": runtime,  # acting and learning are one program
            "env_frames": frames,
            "env_frames_per_second": frames / runtime if runtime else 0.0,
            "mean_episode_reward": float(np.mean(rewards)) if rewards else None,
            "max_episode_reward": float(np.max(rewards)) if rewards else None,
            "min_episode_reward": float(np.min(rewards)) if rewards else None,
            "episode_rewards": rewards,
            "episode_timesteps": [n for member in members for n in member["episode_timesteps"]],
            "final_loss": float(np.mean(losses)) if losses else None,
            "members": members,
            **self.evaluate(workload.evaluation_episodes, workload.max_timesteps_per_episode),
        }

    def _cut_episodes(self, max_episode_steps: int | None) -> None:
        """Cut training episodes after ``max_episode_steps`` (a constant of the programs: they compile again)."""
        if max_episode_steps != self.loop.max_episode_steps:
            self.loop.max_episode_steps = max_episode_steps
            self._programs = {key: program for key, program in self._programs.items() if key[0] != "train"}

    def evaluate(self, episodes: int, max_episode_steps: int | None = None) -> dict[str, Any]:
        """Every member's greedy evaluation (in one program, seeded as a run's are); the ``evaluation_*`` keys
        of the population's returns, and ``evaluation_member_means``."""
        if not episodes:
            return {}
        from rlgraph.training.trainer import EVALUATION_SEED_OFFSET

        seed = None if self.seed is None else self.seed + EVALUATION_SEED_OFFSET
        results = self.evaluate_members(episodes, seed, max_episode_steps)
        returns = [value for result in results for value in result.returns]
        return {
            "evaluation_mean_return": float(np.mean(returns)),
            "evaluation_min_return": float(np.min(returns)),
            "evaluation_max_return": float(np.max(returns)),
            "evaluation_returns": returns,
            "evaluation_member_means": [result.mean_return for result in results],
        }

    def _run(self, name: str, length: Any, *args: Any) -> Any:
        """Program ``name`` of ``length`` (compiled at its first call, timed apart) on ``args``."""
        key = (name, length)
        program = self._programs.get(key)
        if program is None:
            self.clock.start()
            try:
                program = self._programs[key] = self._lower(name, length, args).compile()
            finally:
                self.clock.stop()
        return program(*args)

    def _lower(self, name: str, length: Any, args: Sequence[Any]) -> Any:
        """The program ``name`` lowered for ``length``: iterations (train), or (episodes, steps) (evaluate)."""
        loop = self.loop
        if name == "train":
            return jax.jit(lambda state: loop.train(state, length), donate_argnums=0).lower(*args)
        episodes, steps = length

        def evaluate(graph_state: Any, key: Any) -> Any:
            def act(observations: Any) -> Any:
                return loop.act(graph_state, observations, jnp.int64(0), explore=False)[0]

            return greedy_episodes(self.env, act, key, episodes, steps)

        return jax.jit(jax.vmap(evaluate, in_axes=(0, None))).lower(*args)

    def _announce(self, members: list[dict[str, Any]]) -> None:
        for index, member in enumerate(members):
            self._episodes[index] += len(member["episode_rewards"])
            if self.episode_finish_callback is not None:
                for reward, length in zip(member["episode_rewards"], member["episode_timesteps"]):
                    self.episode_finish_callback(index, reward, length)

    # -- evaluation and checkpoints ------------------------------------------------------------------------------
    def evaluate_members(
        self, episodes: int, seed: int | None, max_episode_steps: int | None = None
    ) -> list[EvaluationResult]:
        """Each member's greedy evaluation: ``episodes`` episodes from the same start states for every member
        (drawn from ``seed``), each until it ends or for ``max_episode_steps`` steps (default: the
        environment's time limit)."""
        steps = max_episode_steps or self.env.max_episode_steps or EPISODE_STEP_LIMIT
        key = jax.random.PRNGKey(np.random.default_rng().integers(2**31) if seed is None else seed)
        graphs = self.loop.graphs(self.state)
        returns, lengths = jax.device_get(self._run("evaluate", (episodes, steps), graphs, key))
        return [
            EvaluationResult(tuple(map(float, returns[i])), tuple(map(int, lengths[i])))
            for i in range(self.population)
        ]

    def load_member_into_agent(self, index: int) -> Any:
        """Put member ``index``'s state into the agent (for a checkpoint, an evaluation on the host); the agent."""
        graphs = self.loop.graphs(self.state)
        self.graph.load(jax.device_get(jax.tree_util.tree_map(lambda x: x[index], graphs)))
        agent = self._agent
        agent.timesteps, agent.updates, agent.episodes = (
            self._timesteps,
            self._updates,
            int(self._episodes[index]),
        )
        return agent

    def store_member(
        self, index: int, path: str | os.PathLike, metadata: Mapping[str, Any] | None = None
    ) -> Path:
        """Member ``index``'s ordinary checkpoint (an agent's: ``rlgraph evaluate`` and the local executor load it)."""
        return self.load_member_into_agent(index).store_model(path, metadata=metadata)

    def load_member(self, index: int, path: str | os.PathLike) -> dict[str, Any]:
        """Load member ``index``'s state from its checkpoint; the checkpoint's metadata."""
        metadata = self._agent.load_model(path)
        count = len(self.graph.variables)  # the member's tunables stay its own
        graphs = self.loop.graphs(self.state)
        loaded = jax.tree_util.tree_map(
            lambda stacked, value: stacked.at[index].set(value), graphs[:count], self.graph.state()[:count]
        )
        self._place(self.loop.with_graphs(self.state, (*loaded, *graphs[count:])))
        return metadata

    def get_state(self) -> dict[str, Any]:
        return {
            **super().get_state(),
            "member_episodes": [int(n) for n in self._episodes],
            "update_seconds": float(self.update_seconds),
            "loop": self.loop.counters(self.state),
        }

    def set_state(self, state: Mapping[str, Any]) -> None:
        """Go on from :meth:`get_state` (the members' graphs loaded already): new episodes, from seeds derived
        from each member's seed and the time steps done."""
        self._timesteps, self._updates = int(state["timesteps"]), int(state["updates"])
        self._episodes = np.asarray(state.get("member_episodes", [0] * self.population), np.int64)
        self.update_seconds = float(state.get("update_seconds", 0.0))
        seeds = [resume_seed(seed, self._timesteps) for seed in self.member_seeds]
        self._place(self.loop.restart(self.state, seeds, self._timesteps, dict(state.get("loop", {}))))

    def _place(self, state: Any) -> None:
        self.state = self.placement.put(state, self.loop.split(state))


def _key(config: Any) -> str:
    """A member config as text (members of one config share its agent)."""
    return json.dumps(config, sort_keys=True, default=str)


def _make_environment(environment_spec: Any) -> Any:
    from rlgraph.environments.vector_env import _environment_factory
    from rlgraph.specs.validation import rebase

    try:
        return _environment_factory(environment_spec, 1)()
    except SpecError as error:
        raise rebase(error, "environment") from error


def _on_jax(agent_config: Any) -> Any:
    """The agent spec, on JAX (a spec naming another backend is refused), with XLA's default threads unless it
    sets them (the environment, made first, has started JAX already)."""
    backend = agent_config.get("backend")
    if backend not in (None, "jax"):
        raise SpecError(
            f"the compiled executor compiles the agent with JAX, not {backend!r}: give backend jax (or none)",
            "agent.backend",
        )
    execution = dict(agent_config.get("execution_spec") or {})
    for key in ("intra_op_threads", "inter_op_threads"):  # the whole program: XLA's own thread pools
        execution.setdefault(key, None)
    return {**agent_config, "backend": "jax", "execution_spec": execution}


def refuse_host_state(agent: Any) -> None:
    """A NotApplicableError for an agent whose preprocessing keeps state per environment on the host side
    of the graph (frame stacks): the compiled loop preprocesses each step's states on their own."""
    if agent.max_environments is not None or agent.preprocessing_state():
        raise NotApplicableError(
            f"{type(agent).__name__} cannot train compiled: its preprocessor keeps state per environment (a "
            "frame stack); give a stateless preprocessing_spec, or use the local executor"
        )


def _member_result(reports: Sequence[Any], index: int) -> dict[str, Any]:
    """Member ``index``'s episodes (in the order they ended) and mean loss (over the iterations that updated)
    over the reports of a workload."""
    rewards: list[float] = []
    lengths: list[int] = []
    losses: list[float] = []
    for report in reports:
        ended = report.ended[index]  # (iterations, T, B) or (iterations, B)
        rewards += report.returns[index][ended].tolist()
        lengths += report.lengths[index][ended].tolist()
        loss = np.ravel(report.loss[index])
        losses += (loss if report.updated is None else loss[np.ravel(report.updated[index])]).tolist()
    return {
        "episode_rewards": rewards,
        "episode_timesteps": lengths,
        "loss": float(np.mean(losses)) if losses else None,
    }


def _lengths(iterations: int, chunk: int) -> list[int]:
    """The program lengths that run ``iterations``: ``chunk`` as often as it fits, then powers of two (few
    programs compile, and few calls run)."""
    lengths = [chunk] * (iterations // chunk)
    rest = iterations % chunk
    power = 1 << max(rest.bit_length() - 1, 0)
    while rest:
        if power <= rest:
            lengths.append(power)
            rest -= power
        power //= 2
    return lengths


def _refuse_non_finite(members: list[dict[str, Any]], seeds: list[int]) -> None:
    """A NonFiniteError naming the members whose loss was not finite (their optimizers skipped those steps)
    and, where one of their episodes ended with a return that is not finite or that overflows float32 in a
    loss, that return."""
    bad = [
        (seed, member)
        for member, seed in zip(members, seeds)
        if member["loss"] is not None and not np.isfinite(member["loss"])
    ]
    if not bad:
        return
    sources = []
    for seed, member in bad:
        returns = np.abs(np.asarray(member["episode_rewards"], np.float64))
        if returns.size and not (returns.max() < OVERFLOWING_MAGNITUDE):
            sources.append(f"seed {seed} ended an episode with a return of {returns.max():.3g}")
    source = (
        f"; {', '.join(sources)}: float32 overflows past 3.4e38 (the square of a value past 1.8e19) in a loss or its "
        "gradients: scale or clip the rewards where they come from"
        if sources
        else "; no episode they ended had a return that is not finite or near float32's limit: the loss diverged "
        "(a lower learning rate or gradient clipping, clip_grad_norm, may help)"
    )
    raise NonFiniteError(
        f"the loss of the members with seeds {[seed for seed, _ in bad]} was not finite, so their optimizer steps "
        f"were skipped (the weights and optimizer state they would have changed are as they were){source}"
    )
