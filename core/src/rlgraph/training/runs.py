"""Run folders read back: the run spec, the checkpoints, and greedy replays of the stored agent."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from rlgraph.agents.roles import Role
from rlgraph.agents.specs import CHECKPOINT_NAME
from rlgraph.environments.vector_env import EnvSpec, VectorEnv, make_environments
from rlgraph.errors import ProgressFileError, RLGraphError
from rlgraph.training.evaluation import MAX_WIDTH, EvaluationResult, GreedyEvaluator
from rlgraph.training.progress import read_progress
from rlgraph.training.spec import RunSpec, environment_label, read_run_spec
from rlgraph.training.trainer import (
    BEST_CHECKPOINT,
    CHECKPOINT_DIR,
    PROGRESS_FILE,
    SUMMARY_FILE,
    build_agent,
    evaluation_seed,
    newest_checkpoint,
)
from rlgraph.utils.naming import normalize_name

DEFAULT_EPISODES = 10


def find_checkpoint(run_dir: str | os.PathLike, checkpoint: str | os.PathLike | None = None) -> Path:
    """The checkpoint to load: ``checkpoint`` (as given, else inside the run's checkpoint folder),
    else the best one, else the newest; CheckpointError if there is none."""
    folder = Path(run_dir) / CHECKPOINT_DIR
    if checkpoint is not None:
        given = Path(checkpoint)
        return given if given.exists() or not (folder / given).exists() else folder / given
    if (folder / BEST_CHECKPOINT).is_file():
        return folder / BEST_CHECKPOINT
    return newest_checkpoint(run_dir)


def training_evaluation(run_dir: str | os.PathLike, checkpoint: Path) -> tuple[int, float] | None:
    """``(time steps, greedy mean return)`` of the evaluation training ran with ``checkpoint``'s weights
    (``best.npz``: the best one; ``model-N.npz``: the one at N steps), from ``summary.json`` and
    ``progress.csv``; None where training ran none, or where those files cannot be read."""
    folder = Path(run_dir)
    if checkpoint.name == BEST_CHECKPOINT:
        try:
            steps = json.loads((folder / SUMMARY_FILE).read_text()).get("best_eval_timesteps")
        except (OSError, ValueError):
            return None
    else:
        match = CHECKPOINT_NAME.search(checkpoint.name)
        steps = int(match.group(1)) if match else None
    if steps is None or not (folder / PROGRESS_FILE).is_file():
        return None
    try:
        rows = read_progress(folder / PROGRESS_FILE)
    except ProgressFileError:  # what training measured is then unknown; the replay stands on its own
        return None
    for row in rows:
        if row["eval_mean_return"] is not None and row["timesteps"] == steps:
            return int(steps), row["eval_mean_return"]
    return None


def evaluate_run(
    run_dir: str | os.PathLike,
    episodes: int | None = None,
    checkpoint: str | os.PathLike | None = None,
    render: bool = False,
    seed: int | None = None,
    backend: str | None = None,
) -> tuple[EvaluationResult, Path]:
    """Rebuild a run's agent, load its checkpoint (see :func:`find_checkpoint`) and play greedy
    episodes (default: the run's evaluation episodes) on its environment; the result and the file.

    ``seed`` seeds the environments (default: as the run's evaluations); ``backend`` overrides the
    run's; ``render`` plays one episode at a time, rendered (Gymnasium environments in a window).
    """
    import gymnasium

    spec = read_run_spec(run_dir, backend)
    episodes = episodes or spec.evaluation.episodes or DEFAULT_EPISODES
    if seed is None:
        seed = evaluation_seed(spec)
    env_spec = _rendered(spec.environment) if render else spec.environment
    try:
        with run_agent(spec, run_dir, checkpoint, env_spec, 1 if render else min(episodes, MAX_WIDTH)) as (
            agent,
            env,
            file,
        ):
            evaluator = GreedyEvaluator(
                agent, env, episodes, seed, max_episode_steps=spec.max_episode_steps, render=render
            )
            return evaluator.run(), file
    except gymnasium.error.DependencyNotInstalled as error:
        raise RLGraphError(f"cannot render {environment_label(spec.environment)}: {error}") from error


@contextlib.contextmanager
def run_agent(
    spec: RunSpec,
    run_dir: str | os.PathLike,
    checkpoint: str | os.PathLike | None = None,
    env_spec: EnvSpec | None = None,
    num_environments: int = 1,
) -> Iterator[tuple[Any, VectorEnv, Path]]:
    """The agent of ``spec``, built to act (the policy role), with a run's checkpoint loaded (see :func:`find_checkpoint`), its
    environments (``env_spec``, default the run's), and the checkpoint file; all released afterwards."""
    file = find_checkpoint(run_dir, checkpoint)
    env = make_environments(spec.environment if env_spec is None else env_spec, num_environments)
    agent = None
    try:
        agent = build_agent(spec, env.state_space, env.action_space, Role.POLICY)
        agent.load_model(file)
        yield agent, env, file
    finally:
        env.terminate()
        if agent is not None:
            agent.terminate()


def _rendered(environment: EnvSpec) -> Any:
    """``environment`` made to render in a window, where it is a Gymnasium environment."""
    if isinstance(environment, str):
        return {"type": "gymnasium", "gym_env": environment, "render_mode": "human"}
    if isinstance(environment, Mapping) and normalize_name(str(environment.get("type"))) in (
        "gymnasium",
        "openaigym",
    ):
        return {**environment, "render_mode": "human"}
    return environment
