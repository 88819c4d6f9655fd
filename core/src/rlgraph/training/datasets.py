"""Offline datasets in Minari's format: recorded from a run's agent (``rlgraph dataset record``) and read
back as transitions, with their spaces and reference scores (offline RL, DQfD's demonstrations).

A dataset is a folder ``NAME-vN`` (Minari's dataset id) holding ``data/`` as Minari writes it, so Minari
and the libraries that read Minari (d3rlpy, torchrl) load it as it is: ``minari.load_dataset("NAME-vN")``
with ``MINARI_DATASETS_PATH`` set to its parent folder. Minari is an optional dependency
(``pip install 'rlgraph[offline]'``).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from rlgraph.errors import RLGraphError
from rlgraph.plugins.providers import install_hint
from rlgraph.spaces import FloatBox, IntBox, Space, from_gymnasium, to_gymnasium
from rlgraph.training.dataset_files import data_folder, env_id_of
from rlgraph.utils import nested

#: The fields of a dataset's transitions: one row per step, episodes one after another in time order (as
#: demonstrations, :data:`rlgraph.training.demos.DEMO_FIELDS`).
FIELDS = ("states", "actions", "rewards", "terminals", "truncateds", "next_states")
#: A Minari dataset id's last part: a name and a version.
_DATASET_NAME = re.compile(r"^[\w.-]+-v\d+$")


def _minari() -> Any:
    try:
        import minari
    except ImportError:
        raise RLGraphError(
            f"Minari datasets need the minari package (with HDF5 storage): {install_hint('rlgraph[offline]')}"
        ) from None
    return minari


@attrs.frozen
class OfflineDataset:
    """A Minari dataset as transitions (:data:`FIELDS`), with its spaces and what it says about itself.

    ``ref_min_score`` and ``ref_max_score`` are the mean returns of a random and an expert policy (Minari's
    reference scores), None where the dataset has none; ``env_id`` is the Gymnasium id it was recorded on,
    where it has one.
    """

    path: Path
    state_space: Space
    action_space: Space
    records: dict[str, Any]
    episode_returns: tuple[float, ...]
    ref_min_score: float | None = None
    ref_max_score: float | None = None
    env_id: str | None = None
    #: What offline training refuses in it, a line each (a reward that is not finite, an action outside
    #: the action space), naming the episode and step.
    problems: tuple[str, ...] = ()

    def __len__(self) -> int:
        return len(self.records["rewards"])

    @property
    def episodes(self) -> int:
        """The episodes the dataset holds (the last may be cut short)."""
        return len(self.episode_returns)

    def normalized_score(
        self, mean_return: float, random_score: float | None = None, expert_score: float | None = None
    ) -> float | None:
        """``(mean_return - random) / (expert - random)``, with the dataset's reference scores unless given;
        None where either is unknown."""
        low = self.ref_min_score if random_score is None else random_score
        high = self.ref_max_score if expert_score is None else expert_score
        if low is None or high is None:
            return None
        if high == low:
            raise RLGraphError(
                f"normalized score of {self.path}: the random and expert scores are equal ({low})"
            )
        return (mean_return - low) / (high - low)

    def describe(self) -> str:
        """A few lines on the dataset: size, spaces, returns and reference scores."""
        returns = self.episode_returns
        lines = [
            f"{self.path}: {len(self):,} steps in {self.episodes} episodes",
            f"  states:  {self.state_space}",
            f"  actions: {self.action_space}",
            f"  returns: mean {np.mean(returns):.4g}, min {np.min(returns):.4g}, max {np.max(returns):.4g}",
            f"  reference scores: random {self.ref_min_score}, expert {self.ref_max_score}",
        ]
        if self.env_id:
            lines.append(f"  environment: {self.env_id}")
        if self.problems:
            lines.append("  problems (offline training refuses the dataset):")
            lines += [f"    {problem}" for problem in self.problems]
        return "\n".join(lines)

    def check_spaces(self, state_space: Space, action_space: Space, what: str) -> None:
        """A clear error where ``what`` (an environment, an agent) has other spaces than the dataset."""
        for name, mine, theirs in (
            ("state", self.state_space, state_space),
            ("action", self.action_space, action_space),
        ):
            if not same_layout(mine, theirs):
                raise RLGraphError(
                    f"dataset {str(self.path)!r} has the {name} space {mine.strip_ranks()}, but {what} has "
                    f"{theirs.strip_ranks()}"
                )


def same_layout(first: Space, second: Space) -> bool:
    """Whether two spaces hold the same values: the same leaves, each of the same type, shape and kind of
    dtype (a dataset's int64 actions fit an agent's int32 ones), and integer leaves of the same bounds (the
    number of actions); a float leaf's bounds and the ranks are not compared."""
    leaves, others = first.strip_ranks().flatten(), second.strip_ranks().flatten()
    if leaves.keys() != others.keys():
        return False
    return all(_same_leaf(leaves[key], others[key]) for key in leaves)


def _same_leaf(first: Space, second: Space) -> bool:
    if type(first) is not type(second) or first.shape != second.shape:
        return False
    if np.dtype(first.dtype).kind != np.dtype(second.dtype).kind:
        return False
    if isinstance(first, IntBox) and isinstance(second, IntBox):
        return bool(np.array_equal(first.low, second.low) and np.array_equal(first.high, second.high))
    return True


# -- recording ----------------------------------------------------------------------------------------------
def record_dataset(
    run_dir: str | os.PathLike,
    out: str | os.PathLike,
    steps: int,
    epsilon: float = 0.0,
    noise: float = 0.0,
    checkpoint: str | os.PathLike | None = None,
    seed: int | None = None,
    reference_episodes: int = 20,
    random_score: float | None = None,
    expert_score: float | None = None,
    backend: str | None = None,
) -> dict[str, Any]:
    """Play ``steps`` steps with a run's agent on one environment and write them to ``out`` as a Minari
    dataset; returns what was written (steps, episodes, their returns, the reference scores).

    The agent acts greedily; with probability ``epsilon`` a step takes a uniformly random action instead,
    and ``noise`` adds Gaussian noise of that scale (times half the action range, clipped to the bounds) to
    continuous actions: the mixed-quality data offline RL learns from. The reference scores are the mean
    returns of ``reference_episodes`` greedy and random episodes unless given (``expert_score``,
    ``random_score``). An episode still running at the last step is cut short there (truncated).
    ``backend`` builds the agent on another backend than the run's.
    """
    from rlgraph.training.evaluation import GreedyEvaluator
    from rlgraph.training.runs import read_run_spec, run_agent
    from rlgraph.training.spec import agent_label

    out = Path(out)
    _check_recording(out, steps, epsilon, noise)
    _minari()
    spec = read_run_spec(run_dir, backend)
    rng = np.random.default_rng(seed)
    with run_agent(spec, run_dir, checkpoint, spec.environment, 1) as (agent, env, file):
        _check_noise(noise, env.action_space)
        episodes, _ = play_episodes(env, _acting(agent, env.action_space, epsilon, noise, rng), steps, seed)
        state_space, action_space = env.state_space, env.action_space
        if expert_score is None:
            evaluation = GreedyEvaluator(agent, spec.environment, reference_episodes, seed=seed)
            try:
                expert_score = evaluation.run().mean_return
            finally:
                evaluation.close()
    if random_score is None:
        random_score = random_policy_score(spec.environment, reference_episodes, seed)
    written = write_dataset(
        out,
        episodes,
        state_space,
        action_space,
        env_id=_gymnasium_id(spec.environment),
        algorithm=f"rlgraph {agent_label(spec.agent)}",
        description=f"{steps} steps of {file} (run {run_dir}), epsilon {epsilon}, noise {noise}",
        random_score=random_score,
        expert_score=expert_score,
    )
    return {**written, "checkpoint": str(file)}


def record_policy_dataset(
    env_spec: Any,
    policy: Callable[[Any], Any],
    out: str | os.PathLike,
    steps: int,
    seed: int | None = None,
    random_score: float | None = None,
    expert_score: float | None = None,
    reference_episodes: int = 20,
) -> dict[str, Any]:
    """Play ``steps`` steps of ``policy`` (a function from one state to its action: a hand-written
    controller, say) on one environment of ``env_spec`` and write them to ``out`` as a Minari dataset, as
    :func:`record_dataset` does for a trained run. The random reference score is measured unless given."""
    out = Path(out)
    _check_recording(out, steps, 0.0, 0.0)
    _minari()
    episodes, _, (state_space, action_space) = play_policy(env_spec, policy, steps, seed)
    if random_score is None:
        random_score = random_policy_score(env_spec, reference_episodes, seed)
    return write_dataset(
        out,
        episodes,
        state_space,
        action_space,
        env_id=_gymnasium_id(env_spec),
        algorithm=getattr(policy, "__name__", "policy"),
        description=f"{steps} steps of {getattr(policy, '__name__', repr(policy))}",
        random_score=random_score,
        expert_score=expert_score,
    )


def write_dataset(
    out: Path,
    episodes: list[dict[str, Any]],
    state_space: Space,
    action_space: Space,
    env_id: str | None,
    algorithm: str,
    description: str,
    random_score: float | None,
    expert_score: float | None,
) -> dict[str, Any]:
    """Write ``episodes`` (:func:`play_episodes`'s) as the Minari dataset ``out``; what was written.
    The reference scores are kept where given (None: unknown)."""
    minari = _minari()
    _check_episodes(episodes, state_space, action_space)
    buffers = [
        minari.data_collector.EpisodeBuffer(id=index, **episode) for index, episode in enumerate(episodes)
    ]
    with _written_whole(out) as staging, _datasets_root(staging), warnings.catch_warnings():
        # Minari recommends an author, their email and a code link for datasets it publishes: these are not.
        warnings.filterwarnings(
            "ignore", message=r".*(is set to None|no environment spec)", category=UserWarning
        )
        dataset = minari.create_dataset_from_buffers(
            dataset_id=out.name,
            buffer=buffers,
            env=env_id,
            observation_space=to_gymnasium(state_space.strip_ranks()),
            action_space=to_gymnasium(action_space.strip_ranks()),
            algorithm_name=algorithm,
            description=f"{description}; recorded by rlgraph",
            data_format="hdf5",
        )
        # Minari computes reference scores itself only on a Gymnasium environment: rlgraph's are kept for any.
        scores = {"ref_min_score": random_score, "ref_max_score": expert_score}
        dataset.storage.update_metadata(
            {key: float(value) for key, value in scores.items() if value is not None}
        )
    return {
        "path": str(out),
        "steps": sum(len(e["rewards"]) for e in episodes),
        "episodes": len(episodes),
        "episode_returns": [float(np.sum(e["rewards"])) for e in episodes],
        **scores,
    }


def _check_episodes(episodes: list[dict[str, Any]], state_space: Space, action_space: Space) -> None:
    """An RLGraphError naming the first episode and step whose observation or action lies outside its
    declared space: Minari writes them as given, and a dataset would declare spaces its data leaves."""
    for name, field, space in (
        ("observation", "observations", state_space),
        ("action", "actions", action_space),
    ):
        one = space.strip_ranks()
        rows = one.with_batch_rank()
        for index, episode in enumerate(episodes):
            values = episode[field]
            if rows.contains(values):
                continue
            count = len(episode["rewards"]) + (field == "observations")
            step = next((i for i in range(count) if not one.contains(nested.get_index(values, i))), None)
            what = (
                f"the {name}s"
                if step is None
                else f"the {name} of step {step}, {nested.get_index(values, step)!r},"
            )
            raise RLGraphError(
                f"episode {index}: {what} does not lie in the declared space {one}; nothing was written (the "
                "environment's values leave its declared space: fix its space)"
            )


@contextlib.contextmanager
def _written_whole(out: Path) -> Iterator[Path]:
    """A folder to write the dataset ``out`` into (as Minari's datasets root), moved to ``out`` once whole: a
    recording that fails, or whose process dies (h5py crashes on a full disk), leaves no partial dataset at
    ``out``, which a retry would refuse to overwrite. What an earlier unfinished recording left is removed."""
    staging = out.parent / f".{out.name}.unfinished"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        yield staging
        (staging / out.name).rename(out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _check_recording(out: Path, steps: int, epsilon: float, noise: float) -> None:
    if steps < 1:
        raise RLGraphError(f"a dataset needs at least one step, got {steps}")
    if not 0.0 <= epsilon <= 1.0:
        raise RLGraphError(f"epsilon is a probability in [0, 1], got {epsilon}")
    if noise < 0.0:
        raise RLGraphError(f"noise is a scale (>= 0), got {noise}")
    if not _DATASET_NAME.match(out.name):
        raise RLGraphError(
            f"a Minari dataset's folder is named NAME-vN (its dataset id), got {out.name!r}: "
            f"use e.g. {str(out.with_name(out.name + '-v0'))!r}"
        )
    if out.exists():
        raise RLGraphError(
            f"{str(out)!r} exists: a dataset is never overwritten (remove it, or choose another)"
        )


def _check_noise(noise: float, action_space: Space) -> None:
    if noise and not isinstance(action_space, FloatBox):
        raise RLGraphError(
            f"noise applies to continuous actions; these are {action_space.strip_ranks()} (use epsilon)"
        )


def _acting(agent: Any, action_space: Space, epsilon: float, noise: float, rng: np.random.Generator) -> Any:
    """The function from one environment's batched state (and internal states) to its action."""
    plain = action_space.strip_ranks()
    plain.seed(int(rng.integers(2**31)))
    internals_space = getattr(agent, "internal_states_space", None)
    internals: dict[str, Any] = {"value": None if internals_space is None else internals_space.zeros(1)}

    def act(states: Any, episode_start: bool) -> Any:
        if episode_start and internals_space is not None:
            internals["value"] = internals_space.zeros(1)
        if episode_start and getattr(agent, "max_environments", None):
            agent.reset_preprocessor(env_rows=np.arange(1))
        if internals["value"] is None:
            actions = agent.get_action(states, use_exploration=False)
        else:
            actions, internals["value"] = agent.get_action(
                states, internals=internals["value"], use_exploration=False, extra_returns="internal_states"
            )
        action = nested.get_index(actions, 0)
        if noise and isinstance(plain, FloatBox):
            half_range = (plain.high - plain.low) / 2.0
            action = np.clip(
                action + rng.normal(0.0, noise, np.shape(action)) * half_range, plain.low, plain.high
            )
            action = np.asarray(action, plain.dtype)
        if epsilon and rng.random() < epsilon:
            action = plain.sample()
        return action

    return act


def play_episodes(
    env: Any, act: Callable[[Any, bool], Any], steps: int, seed: int | None = None
) -> tuple[list[dict[str, Any]], bool]:
    """``steps`` steps on ``env`` (a VectorEnv of one) with ``act(states, episode_start)`` (the batch of one
    state to one action): each episode's observations (one more than its steps: the last is the state it
    ended in), actions, rewards, terminations and truncations; and whether the last episode was still running
    at the last step, cut short there (truncated)."""
    states = env.reset(seed)
    episodes: list[dict[str, Any]] = []
    episode = _new_episode(states)
    for _ in range(steps):
        action = act(states, not episode["actions"])
        states, rewards, terminateds, truncateds, finals, _ = env.step(
            nested.map_structure(lambda a: np.asarray(a)[None], action)
        )
        episode["actions"].append(action)
        episode["rewards"].append(float(rewards[0]))
        episode["terminations"].append(bool(terminateds[0]))
        episode["truncations"].append(bool(truncateds[0]))
        episode["observations"].append(nested.get_index(finals, 0))
        if terminateds[0] or truncateds[0]:
            episodes.append(_finished(episode))
            episode = _new_episode(states)
    cut = bool(episode["actions"])
    if cut:
        episode["truncations"][-1] = True  # the last episode stops with the recording
        episodes.append(_finished(episode))
    return episodes, cut


def play_policy(
    env_spec: Any, policy: Callable[[Any], Any], steps: int, seed: int | None = None
) -> tuple[list[dict[str, Any]], bool, tuple[Space, Space]]:
    """:func:`play_episodes` of ``policy`` (one state to its action) on one environment of ``env_spec``, and the
    environment's state and action spaces."""
    from rlgraph.environments.vector_env import VectorEnv

    env = VectorEnv(env_spec, 1, seed=seed)
    try:
        episodes, cut = play_episodes(
            env, lambda states, start: policy(nested.get_index(states, 0)), steps, seed
        )
    finally:
        env.terminate()
    return episodes, cut, (env.state_space, env.action_space)


def _new_episode(states: Any) -> dict[str, list]:
    return {
        "observations": [nested.get_index(states, 0)],
        "actions": [],
        "rewards": [],
        "terminations": [],
        "truncations": [],
    }


def _finished(episode: dict[str, list]) -> dict[str, Any]:
    """An episode's lists as Minari's buffers take them: nested observations and actions as nests of arrays."""
    return {
        "observations": _stacked(episode["observations"]),
        "actions": _stacked(episode["actions"]),
        "rewards": list(episode["rewards"]),
        "terminations": list(episode["terminations"]),
        "truncations": list(episode["truncations"]),
    }


def _stacked(values: list[Any]) -> Any:
    stacked = nested.stack(values)
    return nested.map_structure(np.asarray, stacked)


def random_policy_score(env_spec: Any, episodes: int, seed: int | None = None) -> float:
    """The mean return of uniformly random actions over ``episodes`` episodes (a reference score)."""
    from rlgraph.environments.vector_env import VectorEnv

    env = VectorEnv(env_spec, 1, seed=seed)
    space = env.action_space.strip_ranks()
    space.seed(seed)
    returns: list[float] = []
    total = 0.0
    try:
        env.reset(seed)
        while len(returns) < episodes:
            _, rewards, terminateds, truncateds, _, _ = env.step(space.sample(1))
            total += float(rewards[0])
            if terminateds[0] or truncateds[0]:
                returns.append(total)
                total = 0.0
    finally:
        env.terminate()
    return float(np.mean(returns))


def _gymnasium_id(environment: Any) -> str | None:
    """The Gymnasium id of a run's environment, where it is a plain Gymnasium environment."""
    if isinstance(environment, str):
        return environment
    if isinstance(environment, dict) and str(environment.get("type", "")).replace("-", "").lower() in (
        "gymnasium",
        "openaigym",
    ):
        gym_env = environment.get("gym_env")
        others = set(environment) - {"type", "gym_env", "seed"}
        return gym_env if isinstance(gym_env, str) and not others else None
    return None


@contextlib.contextmanager
def _datasets_root(root: Path) -> Iterator[None]:
    """Minari's dataset root (``MINARI_DATASETS_PATH``, the way Minari is told where datasets live) set to
    ``root`` while a dataset is written or found there."""
    root.mkdir(parents=True, exist_ok=True)
    previous = os.environ.get("MINARI_DATASETS_PATH")
    os.environ["MINARI_DATASETS_PATH"] = str(root.resolve())
    try:
        yield
    finally:
        if previous is None:
            del os.environ["MINARI_DATASETS_PATH"]
        else:
            os.environ["MINARI_DATASETS_PATH"] = previous


# -- reading --------------------------------------------------------------------------------------------------
def load_dataset(path: str | os.PathLike) -> OfflineDataset:
    """The Minari dataset at ``path`` (its ``NAME-vN`` folder, or the ``data`` folder in it) as transitions;
    a clear error for a missing, corrupt or unreadable one."""
    minari = _minari()
    data = data_folder(Path(path))
    try:
        dataset = minari.MinariDataset(data)
        metadata = dict(dataset.storage.metadata)
        episodes = list(dataset.iterate_episodes())
    except (OSError, ValueError, KeyError, TypeError, AssertionError) as error:  # h5py's, json's, Minari's
        raise RLGraphError(
            f"{str(path)!r} is not a readable Minari dataset: {type(error).__name__}: {error}"
        ) from None
    if not episodes:
        raise RLGraphError(f"Minari dataset {str(path)!r} holds no episodes")
    state_space = from_gymnasium(dataset.observation_space)
    action_space = from_gymnasium(dataset.action_space)
    records = _transitions(episodes, str(path), state_space, action_space)
    return OfflineDataset(
        path=Path(path),
        state_space=state_space,
        action_space=action_space,
        records=records,
        episode_returns=tuple(float(np.sum(e.rewards)) for e in episodes),
        ref_min_score=_optional_float(metadata.get("ref_min_score")),
        ref_max_score=_optional_float(metadata.get("ref_max_score")),
        env_id=env_id_of(metadata.get("env_spec")),
        problems=tuple(_problems(episodes, action_space)),
    )


#: The episodes each kind of problem names at most (then how many more).
PROBLEMS_SHOWN = 5


def _transitions(episodes: list[Any], label: str, state_space: Space, action_space: Space) -> dict[str, Any]:
    """Minari's episodes as rows of :data:`FIELDS` (see :func:`episode_rows`); an error naming the episode
    where one lacks its final observation or holds values of other shapes than the dataset's spaces."""
    for episode in episodes:
        if len(nested.flatten(episode.observations)[0]) != len(episode.rewards) + 1:
            raise RLGraphError(f"Minari dataset {label!r}: episode {episode.id} has no final observation")
        _check_shapes(episode.observations, state_space, f"episode {episode.id}'s observations", label)
        _check_shapes(episode.actions, action_space, f"episode {episode.id}'s actions", label)
    return episode_rows(
        [
            {
                "observations": episode.observations,
                "actions": episode.actions,
                "rewards": episode.rewards,
                "terminations": episode.terminations,
                "truncations": episode.truncations,
            }
            for episode in episodes
        ]
    )


def episode_rows(episodes: list[dict[str, Any]]) -> dict[str, Any]:
    """Episodes (:func:`play_episodes`' layout: observations one more than the steps) as rows of
    :data:`FIELDS`, one episode after another: states and next states from each episode's observations."""
    parts: dict[str, list] = {name: [] for name in FIELDS}
    for episode in episodes:
        observations = episode["observations"]
        parts["states"].append(nested.map_structure(lambda o: np.asarray(o)[:-1], observations))
        parts["next_states"].append(nested.map_structure(lambda o: np.asarray(o)[1:], observations))
        parts["actions"].append(nested.map_structure(np.asarray, episode["actions"]))
        parts["rewards"].append(np.asarray(episode["rewards"], np.float32))
        parts["terminals"].append(np.asarray(episode["terminations"], bool))
        parts["truncateds"].append(np.asarray(episode["truncations"], bool))
    return {
        name: nested.map_structure(lambda *rows: np.concatenate(rows), *values)
        for name, values in parts.items()
    }


def _check_shapes(values: Any, space: Space, what: str, label: str) -> None:
    """An error where ``values`` (one array per leaf of ``space``, a row per step) are of other parts or
    shapes than ``space`` holds."""
    leaves = space.strip_ranks().flatten()
    arrays = {path: np.asarray(leaf) for path, leaf in nested.flatten_with_paths(values).items()}
    kind = "observation" if "observations" in what else "action"
    if arrays.keys() != leaves.keys():
        raise RLGraphError(
            f"Minari dataset {label!r}: {what} have the parts {sorted(arrays)}, but the dataset's {kind} "
            f"space has {sorted(leaves)}: every episode must hold values of its spaces (record it again, or "
            "leave the episode out)"
        )
    for path, array in arrays.items():
        if array.shape[1:] != leaves[path].shape:
            part = f"[{path!r}]" if path else ""
            raise RLGraphError(
                f"Minari dataset {label!r}: {what}{part} are of shape {array.shape[1:]} per step "
                f"({len(array)} of them), but the dataset's {kind} space holds {leaves[path].shape}: every "
                "episode must hold values of its spaces (record it again, or leave the episode out)"
            )


def _problems(episodes: list[Any], action_space: Space) -> Iterator[str]:
    """A line per episode whose rewards are not all finite, then per episode whose actions are not all in
    ``action_space``: its first such step and how many there are (at most :data:`PROBLEMS_SHOWN` episodes
    each, then how many more)."""
    plain = action_space.strip_ranks()
    batch = plain.with_batch_rank()
    rewards, actions = [], []
    for episode in episodes:
        steps = len(episode.rewards)
        finite = np.isfinite(np.asarray(episode.rewards, np.float64))
        if not finite.all():
            first = int(np.argmin(finite))
            rewards.append(
                f"episode {episode.id}: reward {episode.rewards[first]} at step {first} "
                f"({steps - int(finite.sum())} {_steps(steps - int(finite.sum()))} of {steps} not finite)"
            )
        if not batch.contains(episode.actions):
            outside = [
                step
                for step in range(steps)
                if not plain.contains(
                    nested.map_structure(lambda a, s=step: np.asarray(a)[s], episode.actions)
                )
            ]
            first = nested.map_structure(lambda a, s=outside[0]: np.asarray(a)[s], episode.actions)
            actions.append(
                f"episode {episode.id}: action {first} at step {outside[0]} is outside the action space "
                f"{plain} ({len(outside)} {_steps(len(outside))} of {steps})"
            )
    for lines in (rewards, actions):
        yield from lines[:PROBLEMS_SHOWN]
        if len(lines) > PROBLEMS_SHOWN:
            yield f"... and {len(lines) - PROBLEMS_SHOWN} more episodes like these"


def _steps(count: int) -> str:
    return "step" if count == 1 else "steps"


def _optional_float(value: Any) -> float | None:
    return None if value is None else float(value)
