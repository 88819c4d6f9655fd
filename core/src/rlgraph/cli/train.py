"""``rlgraph train SPEC``: train an agent from a run spec or an agent spec, into a run folder."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rlgraph.errors import RLGraphError, SpecError
from rlgraph.specs.checks import positive_int_argument


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the command's arguments."""
    parser.description = (
        "Train an agent. SPEC is a JSON or YAML file: a run spec (an 'agent' key with the agent spec, "
        "plus 'environment', 'timesteps', 'evaluation', ...) or an agent spec (a 'type' key) with --env. "
        "Options override the file. --resume RUN goes on with a stopped run instead (Ctrl-C stops a run "
        "after the steps under way, with a checkpoint to go on from)."
    )
    parser.add_argument("spec", metavar="SPEC", nargs="?", help="run spec or agent spec file (.json, .yaml)")
    parser.add_argument(
        "--resume",
        metavar="RUN",
        type=Path,
        help="go on with the run folder RUN from its newest intact checkpoint (--timesteps may extend it)",
    )
    parser.add_argument(
        "--env", metavar="ENV", type=_yaml_value, help="Gymnasium id or environment spec, e.g. CartPole-v1"
    )
    parser.add_argument("--backend", metavar="NAME", help="backend to build the agent on, e.g. torch")
    parser.add_argument(
        "--timesteps", metavar="N", type=positive_int_argument, help="environment steps to train"
    )
    parser.add_argument(
        "--num-envs",
        dest="num_envs",
        metavar="N",
        type=positive_int_argument,
        help="environments stepped together",
    )
    parser.add_argument("--seed", metavar="S", type=int, help="seed of environments and agent")
    parser.add_argument(
        "--executor",
        metavar="NAME",
        help="executor to train with: local (one process, the default) or a plugin's, e.g. apex (rlgraph-ray); "
        "the spec's executor options are dropped when NAME differs from its executor",
    )
    parser.add_argument(
        "--num-workers",
        dest="num_workers",
        metavar="N",
        type=positive_int_argument,
        help="workers of a distributed executor",
    )
    parser.add_argument(
        "--num-learners",
        dest="num_learners",
        metavar="N",
        type=positive_int_argument,
        help="learners that learn as one, each from 1/N of every batch (a learner group)",
    )
    parser.add_argument(
        "--population",
        metavar="N",
        type=positive_int_argument,
        help="agents trained at once, seeds SEED to SEED+N-1 (executor compiled: one program for all)",
    )
    parser.add_argument(
        "--population-set",
        dest="population_set",
        metavar="KEY.PATH=V1,V2",
        action="append",
        help="agent settings the population's members differ in, as rlgraph sweep's --set (repeatable: their "
        "combinations; member i takes combination i modulo their number)",
    )
    parser.add_argument(
        "--eval-interval", metavar="N", type=positive_int_argument, help="steps between greedy evaluations"
    )
    parser.add_argument(
        "--eval-episodes",
        metavar="N",
        type=int,
        help="episodes per greedy evaluation (0: none, and no target return)",
    )
    parser.add_argument(
        "--target-return", metavar="R", type=float, help="stop once the greedy mean return reaches R"
    )
    parser.add_argument(
        "--run-dir",
        metavar="DIR",
        type=Path,
        help="run folder (default: runs/<agent>-<env>-<UTC time> in the current folder)",
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace the run in --run-dir (a run folder no process trains in), e.g. one stopped before its "
        "first checkpoint; it is emptied once the new run's agent is built",
    )
    parser.add_argument(
        "--set",
        metavar="KEY.PATH=VALUE",
        action="append",
        default=[],
        help="set any key of the run spec, agent keys under 'agent.' (value read as YAML; repeatable)",
    )
    parser.add_argument("--quiet", "-q", action="store_true", help="print only the summary")


def run(args: argparse.Namespace) -> int:
    """Train; return 0, or 130 when interrupted (Ctrl-C)."""
    from rlgraph.training import ProgressDisplay, Trainer, default_run_dir
    from rlgraph.training.population import PopulationTrainer, trains_population
    from rlgraph.training.spec import RUNS_ROOT

    if args.resume is not None:
        return _resume(args)
    if args.overwrite and args.run_dir is None:
        raise RLGraphError("--overwrite replaces the run in --run-dir: give --run-dir RUN")
    spec = run_spec_of(args)
    had_runs_root = Path(RUNS_ROOT).exists()
    run_dir = args.run_dir or default_run_dir(spec)
    try:
        try:
            trainer_class = PopulationTrainer if trains_population(spec) else Trainer
            trainer = trainer_class(
                spec,
                run_dir,
                display=ProgressDisplay(spec.timesteps, enabled=not args.quiet),
                overwrite=args.overwrite,
            )
        except BaseException:
            if not args.run_dir:  # the folder reserved for this run (and its root, if new) stays empty
                with contextlib.suppress(OSError):
                    Path(run_dir).rmdir()
                    if not had_runs_root:
                        Path(RUNS_ROOT).rmdir()
            raise
    except KeyboardInterrupt:
        return _interrupted()
    return _train(trainer)


def run_spec_of(args: argparse.Namespace) -> Any:
    """The run spec the command's parsed arguments describe (SPEC with --set and the options applied)."""
    from rlgraph.training import load_run_spec
    from rlgraph.training.spec import OPTION_KEYS

    if args.spec is None:
        raise RLGraphError("give a SPEC file to train, or --resume RUN to go on with a run")
    return load_run_spec(args.spec, args.set, {option: getattr(args, option) for option in OPTION_KEYS})


def parse(arguments: Sequence[str]) -> argparse.Namespace:
    """``rlgraph train``'s arguments parsed (what follows ``train`` on the command line)."""
    parser = argparse.ArgumentParser(prog="rlgraph train")
    add_arguments(parser)
    return parser.parse_args(list(arguments))


def _resume(args: argparse.Namespace) -> int:
    """``--resume RUN``: go on with a run; only ``--timesteps`` (and ``--quiet``) may be given with it."""
    from rlgraph.training import ProgressDisplay, Trainer, read_run_spec
    from rlgraph.training.population import PopulationTrainer, trains_population
    from rlgraph.training.spec import OPTION_KEYS

    changed = [f"--{option.replace('_', '-')}" for option in OPTION_KEYS if getattr(args, option) is not None]
    changed = [option for option in changed if option != "--timesteps"] + ["--set"] * bool(args.set)
    changed += ["--overwrite"] * args.overwrite
    if args.spec is not None or args.run_dir is not None or changed:
        given = ([args.spec] if args.spec else []) + ["--run-dir"] * (args.run_dir is not None) + changed
        raise RLGraphError(
            f"--resume goes on with the run's own spec and folder; it takes only --timesteps, got {', '.join(given)}"
        )
    try:
        trainer_class = PopulationTrainer if trains_population(read_run_spec(args.resume)) else Trainer
        trainer = trainer_class.resume(args.resume, args.timesteps)
    except KeyboardInterrupt:
        return _interrupted()
    trainer.display = ProgressDisplay(trainer.spec.timesteps, enabled=not args.quiet)
    return _train(trainer)


def _train(trainer: Any) -> int:
    """Run ``trainer`` (it handles Ctrl-C during training itself); print its summary; the exit status."""
    try:
        summary = trainer.run()
    except KeyboardInterrupt:  # a second Ctrl-C while the final checkpoint is stored
        return _interrupted()
    print(summary.format())
    return 130 if summary.interrupted else 0


def _interrupted() -> int:
    print("rlgraph train: interrupted.", file=sys.stderr)
    return 130


def _yaml_value(text: str) -> Any:
    """A command-line value read as YAML (``'{type: grid_world}'`` is a dict), else the text itself."""
    import yaml

    from rlgraph.specs.loading import load_yaml

    try:
        value = load_yaml(text)
    except yaml.YAMLError:
        return text
    except SpecError as error:  # a key given twice
        raise argparse.ArgumentTypeError(str(error)) from None
    return value if isinstance(value, str | dict) else text
