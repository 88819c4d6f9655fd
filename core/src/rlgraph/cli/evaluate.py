"""``rlgraph evaluate RUN_FOLDER``: replay a trained agent greedily and print its returns."""

from __future__ import annotations

import argparse
from pathlib import Path

from rlgraph.specs.checks import positive_int_argument


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the command's arguments."""
    parser.description = (
        "Rebuild the agent of a run folder (written by 'rlgraph train'), load its best checkpoint "
        "(else the newest) and play greedy episodes on the run's environment."
    )
    parser.add_argument("run_dir", metavar="RUN_FOLDER", type=Path, help="a run folder of 'rlgraph train'")
    parser.add_argument(
        "--episodes",
        metavar="N",
        type=positive_int_argument,
        help="episodes to play (default: the run's evaluation's)",
    )
    parser.add_argument(
        "--checkpoint",
        metavar="FILE",
        type=Path,
        help="checkpoint to load (a path, or a name in checkpoints/)",
    )
    parser.add_argument("--render", action="store_true", help="show the episodes, one at a time")
    parser.add_argument("--seed", metavar="S", type=int, help="seed of the environments")
    parser.add_argument(
        "--backend", metavar="NAME", help="backend to build the agent on (default: the run's)"
    )


def run(args: argparse.Namespace) -> int:
    """Evaluate; print the mean, min and max return; return 0."""
    from rlgraph.training import evaluate_run
    from rlgraph.training.runs import training_evaluation

    result, checkpoint = evaluate_run(
        args.run_dir, args.episodes, args.checkpoint, args.render, args.seed, args.backend
    )
    print(
        f"{len(result.returns)} greedy episodes with {checkpoint}: mean return {result.mean_return:.4g}, "
        f"min {result.min_return:.4g}, max {result.max_return:.4g} (mean length {result.mean_length:.1f})"
    )
    during_training = training_evaluation(args.run_dir, checkpoint)
    if during_training is not None:
        steps, mean_return = during_training
        print(
            f"Training evaluated these weights at {steps:,} steps: mean return {mean_return:.4g}, {_episodes(args)}."
        )
    return 0


def _episodes(args: argparse.Namespace) -> str:
    """Whether this evaluation played the episodes training's evaluations played, and if not, why."""
    from rlgraph.training.runs import read_run_spec
    from rlgraph.training.trainer import evaluation_seed

    spec = read_run_spec(args.run_dir)
    seed = evaluation_seed(spec)
    if seed is None:
        return "on other episodes (the run has no seed, so its evaluation episodes cannot be replayed)"
    if args.render or (args.seed is not None and args.seed != seed):
        return "on other episodes (--seed or --render changes them)"
    if (
        args.episodes not in (None, spec.evaluation.episodes)
        or (args.backend or spec.backend) != spec.backend
    ):
        return "on other episodes or actions (--episodes or --backend changes them)"
    return "on the same episodes"
