"""The executor contract: what coordinates acting and learning, in one process or many.

Acting, learning and coordinating are separate roles:

* a **worker** acts in its environments with given weights and hands out plain records: a
  :class:`~rlgraph.workers.SingleThreadedWorker` ``sample(n)`` gives a
  :class:`~rlgraph.workers.SampleBatch` (time-major records and episode statistics) and takes
  ``set_weights(weights)``;
* a **learner** (an :class:`~rlgraph.agents.Agent`) updates on a batch, ``update(batch)``, and returns an
  :class:`~rlgraph.agents.records.UpdateResult`: the loss and the per-item values an algorithm needs (the
  TD errors a prioritized replay takes as new priorities);
* an **executor** coordinates them: ``execute_workload(workload)`` runs a :class:`Workload` and returns a
  dict of result metrics (:data:`RESULT_KEYS` at least), as RLgraph's ``ApexExecutor`` does.

Everything that crosses a process boundary is plain data: specs, NumPy arrays, dicts. An executor is a
plugin (entry-point group ``rlgraph.executors``, with ``RLGRAPH_PLUGIN_API`` in its module); the
core's :class:`~rlgraph.executors.local.LocalExecutor` is the single-process one.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import attrs
import numpy as np

from rlgraph.specs import Specifiable
from rlgraph.specs.checks import at_least, positive_int
from rlgraph.specs.validation import construct

RESULT_KEYS = (
    "timesteps_executed",
    "episodes_executed",
    "updates_executed",
    "runtime",
    "env_frames_per_second",
    "mean_episode_reward",
    "episode_rewards",
)
"""Keys every executor's ``execute_workload`` result holds (more are welcome)."""

EpisodeCallback = Callable[[Any, float, int], Any]
"""Called as ``callback(env_id, episode_return, episode_length)`` when an episode ends."""


@attrs.define
class Workload:
    """What one ``execute_workload`` call runs (RLgraph's keys).

    ``num_timesteps`` environment steps over all workers and environments; ``report_interval``: time steps
    between the result's ``reports`` rows (None: one at the end); ``max_timesteps_per_episode`` cuts
    episodes (0: only the environment's own limit); ``frameskip`` repeats each action;
    ``evaluation_episodes``: greedy episodes the learner's agent plays at the end (the result's
    ``evaluation_*`` keys; 0: none).
    """

    num_timesteps: int = attrs.field(validator=at_least(1))
    report_interval: int | None = attrs.field(default=None, validator=at_least(1))
    max_timesteps_per_episode: int = attrs.field(default=0, validator=at_least(0))
    frameskip: int = attrs.field(default=1, validator=at_least(1))
    evaluation_episodes: int = attrs.field(default=0, validator=at_least(0))

    @classmethod
    def of(cls, workload: Workload | Mapping[str, Any]) -> Workload:
        """``workload`` as a Workload; a dict is checked key by key (errors name ``workload.<key>``)."""
        return workload if isinstance(workload, Workload) else construct(cls, dict(workload), "workload")


class Executor(Specifiable, metaclass=abc.ABCMeta):
    """Coordinates workers that act and a learner that updates (see the module docstring).

    ``environment_spec`` and ``agent_config`` are specs (plain data), so that workers in other processes
    can build their own environments and agents; ``agent`` is the learner's agent in this process (for
    evaluation and checkpoints). ``timesteps``, ``episodes`` and ``updates`` count everything executed so far.
    """

    __rlgraph_group__ = "rlgraph.executors"
    #: Whether the agent stores the steps of the executor's own environments (``num_environments`` of a run
    #: spec) and learns from them: the batches its spec fixes can then be sized before it starts.
    learns_from_own_environments: ClassVar[bool] = False

    def __init__(self, environment_spec: Any, agent_config: Any, seed: int | None = None) -> None:
        self.environment_spec = environment_spec
        self.agent_config = agent_config
        self.seed = seed

    @property
    @abc.abstractmethod
    def agent(self) -> Any:
        """The learner's agent, in this process."""

    @property
    @abc.abstractmethod
    def timesteps(self) -> int: ...

    @property
    @abc.abstractmethod
    def episodes(self) -> int: ...

    @property
    @abc.abstractmethod
    def updates(self) -> int: ...

    @abc.abstractmethod
    def execute_workload(self, workload: Workload | Mapping[str, Any]) -> dict[str, Any]:
        """Run ``workload``; its result metrics (:data:`RESULT_KEYS` and more)."""

    def evaluate(self, episodes: int, max_episode_steps: int | None = None) -> dict[str, Any]:
        """Play ``episodes`` greedy episodes with the learner's agent on environments of their own, seeded
        as a training run's evaluations are (the executor's seed plus 1,000,000); the ``evaluation_*``
        result keys (none for 0 episodes)."""
        if not episodes:
            return {}
        from rlgraph.training.evaluation import GreedyEvaluator
        from rlgraph.training.trainer import EVALUATION_SEED_OFFSET

        seed = None if self.seed is None else self.seed + EVALUATION_SEED_OFFSET
        evaluator = GreedyEvaluator(
            self.agent, self.environment_spec, episodes, seed, max_episode_steps or None
        )
        try:
            result = evaluator.run()
        finally:
            evaluator.close()
        return {
            "evaluation_mean_return": result.mean_return,
            "evaluation_min_return": result.min_return,
            "evaluation_max_return": result.max_return,
            "evaluation_returns": list(result.returns),
        }

    def metrics(self) -> dict[str, float]:
        """What this executor counts beyond time steps, episodes and updates, as scalars by name (a
        distributed one: worker restarts, weight broadcasts, ...): columns of a run's ``progress.csv``
        and TensorBoard scalars (``executor/<name>``). The same names in every call; none by default."""
        return {}

    def get_state(self) -> dict[str, Any]:
        """What the executor has counted, as plain (JSON) data: with the agent's checkpoint, what a run
        needs to go on (:meth:`set_state`)."""
        return {
            "timesteps": int(self.timesteps),
            "episodes": int(self.episodes),
            "updates": int(self.updates),
        }

    def set_state(self, state: Mapping[str, Any]) -> None:
        """Go on from :meth:`get_state`'s result, with the agent already loaded from its checkpoint:
        the counts continue, and the environments start new episodes from a seed derived from the run's
        seed and the time steps done (see :func:`resume_seed`)."""
        raise NotImplementedError(f"{type(self).__name__} cannot go on from a saved state")

    def terminate(self) -> None:
        """Release environments, workers and processes."""


def check_positive_ints(**values: Any) -> None:
    """A SpecError naming the first of ``values`` that is not an int >= 1."""
    for name, value in values.items():
        positive_int(value, name)


def resume_seed(seed: int | None, timesteps: int) -> int | None:
    """The environments' seed for a run going on after ``timesteps`` steps (None where the run has no
    seed): distinct from the first one and from every other resume point."""
    if seed is None:
        return None
    return int(np.random.SeedSequence([int(seed), int(timesteps)]).generate_state(1)[0])
