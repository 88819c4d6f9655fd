"""The run spec: what ``rlgraph train`` trains, where, for how long, and how it is evaluated.

A spec file holds either a run spec (an ``agent`` key with the agent spec, plus run settings)
or a plain agent spec (a top-level ``type``, as RLgraph's own configs), which needs the
environment from the command line. Command-line settings override the file's.
"""

from __future__ import annotations

import copy
import itertools
import os
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs

from rlgraph.errors import CheckpointError, RLGraphError, SpecError
from rlgraph.specs.checks import at_least, positive, validator_of
from rlgraph.specs.loading import load_spec_file, load_yaml
from rlgraph.specs.validation import construct
from rlgraph.training.dataset_files import dataset_env_id


@attrs.define
class EvaluationSpec:
    """Greedy evaluations during training.

    Every ``interval`` time steps (default: a tenth of the run) and at the end, the agent plays
    ``episodes`` complete episodes without exploration, in environments of its own. Training stops
    early once their mean return reaches ``target_return``. ``episodes: 0`` turns evaluation off.
    ``seed`` seeds the evaluation environments afresh at every evaluation (environment ``i``: ``seed +
    i``), so that every evaluation plays the same start states and ``rlgraph evaluate`` replays them;
    default: the run's seed plus 1,000,000 (without a run seed, the environments' streams continue).
    """

    interval: int | None = attrs.field(default=None, validator=at_least(1))
    episodes: int = attrs.field(default=10, validator=at_least(0))
    target_return: float | None = None
    seed: int | None = None


@attrs.define
class RunSpec:
    """One training run: an agent spec, an environment, and the run's settings.

    ``environment``: a Gymnasium id or an environment spec dict (``{"type": "grid_world"}``).
    ``seed`` seeds everything: the training environments, the agent (its ``execution_spec.seed``)
    and the evaluation environments. ``backend`` overrides the agent spec's. ``log_interval``:
    time steps between progress rows (default: a hundredth of the run, at most 10,000).
    ``checkpoint_interval``: time steps between checkpoints (default: only the final and the best
    one); the newest ``keep_checkpoints`` are kept. ``max_episode_steps`` cuts episodes (training
    and evaluation) after that many steps; without it, only the environment's own limit applies.
    ``dataset``: a Minari dataset's folder (:mod:`rlgraph.training.datasets`) to train from offline, with
    no acting: the ``offline`` executor stores it in the agent's memory and each of the ``timesteps`` is one
    update; the environment (default: the dataset's Gymnasium id) gives the spaces and the greedy
    evaluations, and the summary the normalized score of their returns.
    ``initial_checkpoint``: a checkpoint (a file, or a run folder's newest) whose variables, memories among
    them, the agent starts from: an offline run's, to go on online (offline-to-online), or any run's of the
    same agent spec.
    ``callbacks``: observers of the trainer's events, ``"package.module:ClassName"`` or the name of
    a plugin in the ``rlgraph.callbacks`` entry-point group (see
    :class:`rlgraph.plugins.hookspecs.EventHooks`), each class instantiated without arguments.
    ``num_learners``: learners that learn as one, each from 1/N of every batch (a learner group:
    :mod:`rlgraph.agents.learner_group`; the backend must have collectives). ``num_cpus_per_learner``: the
    CPUs Ray reserves for each learner it places (default 1; below 1, learners share CPUs; a GPU learner
    reserves its GPU instead; on the cluster RLgraph starts, what is free where that is less).
    ``allow_open_learner_servers``: let a learner group run on a backend whose collective's servers listen on
    every network interface and run what any client sends (TensorFlow's gRPC servers): refused without it
    (default false). ``population``: agents of this spec trained at once by an executor that
    trains populations (``executor: compiled``, rlgraph-jax: one program for all), member ``i`` with seed
    ``seed + i``, each evaluated, checkpointed and reported on its own
    (:mod:`rlgraph.training.population`). ``population_set``: agent settings the members differ in, as
    ``rlgraph sweep``'s ``--set`` takes them (``"agent.optimizer_spec.learning_rate=0.001,0.003"``): member
    ``i`` takes combination ``i`` modulo their number, which must divide ``population``.
    """

    agent: dict[str, Any]
    environment: str | dict[str, Any]
    num_environments: int = attrs.field(default=1, validator=at_least(1))
    timesteps: int = attrs.field(default=100_000, validator=at_least(1))
    seed: int | None = None
    backend: str | None = None
    evaluation: EvaluationSpec = attrs.field(factory=EvaluationSpec)
    log_interval: int | None = attrs.field(default=None, validator=at_least(1))
    checkpoint_interval: int | None = attrs.field(default=None, validator=at_least(1))
    callbacks: list[str] = attrs.field(factory=list)
    keep_checkpoints: int = attrs.field(default=5, validator=at_least(1))
    max_episode_steps: int | None = attrs.field(default=None, validator=at_least(1))
    executor: str | dict[str, Any] = "local"
    num_learners: int = attrs.field(default=1, validator=at_least(1))
    num_cpus_per_learner: float = attrs.field(default=1.0, validator=validator_of(positive))
    allow_open_learner_servers: bool = False
    population: int = attrs.field(default=1, validator=at_least(1))
    population_set: list[str] = attrs.field(factory=list)
    dataset: str | None = None
    initial_checkpoint: str | None = None

    def __attrs_post_init__(self) -> None:
        if "type" not in self.agent:
            raise SpecError("missing required key 'type' (the agent to train)", "agent")
        if self.evaluation.target_return is not None and not self.evaluation.episodes:
            raise SpecError("a target return needs evaluation episodes (episodes >= 1)", "evaluation")
        combinations = len(member_settings(self))
        if self.population % combinations:
            raise SpecError(
                f"the {combinations} combinations of population_set must divide the population of {self.population} "
                "(member i takes combination i modulo their number)",
                "population",
            )

    @property
    def evaluation_interval(self) -> int:
        """Time steps between greedy evaluations."""
        return self.evaluation.interval or max(1, self.timesteps // 10)

    @property
    def progress_interval(self) -> int:
        """Time steps between progress rows."""
        return self.log_interval or max(1, min(self.timesteps // 100, 10_000))

    def agent_spec(self) -> dict[str, Any]:
        """The agent spec to build, with the run's seed and backend applied."""
        spec = dict(self.agent)
        if self.seed is not None:
            spec["execution_spec"] = {**(spec.get("execution_spec") or {}), "seed": self.seed}
        if self.backend is not None:
            spec["backend"] = self.backend
        return spec

    def to_dict(self) -> dict[str, Any]:
        """The spec as plain data (what ``run.yaml`` holds)."""
        return attrs.asdict(self)


def member_settings(spec: RunSpec) -> list[tuple[str, ...]]:
    """The combinations of a population's ``population_set`` (one empty one without it); errors name it."""
    try:
        grid = parse_grid(spec.population_set)
    except SpecError as error:
        raise SpecError(str(error).replace("--set", "population_set"), "population_set") from None
    for alternatives in grid:
        if not alternatives[0].startswith("agent."):
            raise SpecError(
                f"{alternatives[0]!r}: members of one program differ in agent settings only (agent.<key>=...)",
                "population_set",
            )
    return list(itertools.product(*grid))


def member_spec(spec: RunSpec, index: int, seed: int | None = None) -> RunSpec:
    """Member ``index``'s run spec: its settings applied, with ``seed`` (default: the run's seed plus ``index``),
    one agent (``population`` 1, no ``population_set``)."""
    combinations = member_settings(spec)
    data = spec.to_dict()
    data.update(population=1, population_set=[])
    if seed is None and spec.seed is not None:
        seed = spec.seed + index
    data["seed"] = seed
    return load_run_spec(data, combinations[index % len(combinations)])


#: Command-line option -> the run spec key path it sets.
OPTION_KEYS: dict[str, tuple[str, ...]] = {
    "env": ("environment",),
    "backend": ("backend",),
    "timesteps": ("timesteps",),
    "num_envs": ("num_environments",),
    "seed": ("seed",),
    "eval_interval": ("evaluation", "interval"),
    "eval_episodes": ("evaluation", "episodes"),
    "target_return": ("evaluation", "target_return"),
    "executor": ("executor", "type"),
    "num_workers": ("executor", "num_workers"),
    "num_learners": ("num_learners",),
    "population": ("population",),
    "population_set": ("population_set",),
}


def read_run_spec(run_dir: str | os.PathLike, backend: str | None = None) -> RunSpec:
    """The run spec stored in a run folder (``backend`` in place of the run's, where given); CheckpointError
    if there is no run folder or spec."""
    folder = Path(run_dir)
    if not folder.is_dir():
        raise CheckpointError(f"no run folder at {str(folder)!r}")
    file = folder / RUN_SPEC_FILE
    if not file.is_file():
        raise CheckpointError(f"{str(folder)!r} is not a run folder: it has no {RUN_SPEC_FILE}")
    try:
        spec = load_run_spec(file)
    except SpecError as error:
        raise CheckpointError(f"{file} is not a valid run spec: {error}") from error
    return spec if backend is None else attrs.evolve(spec, backend=backend)


def load_run_spec(
    source: str | os.PathLike | Mapping[str, Any],
    assignments: Sequence[str] = (),
    options: Mapping[str, Any] | None = None,
) -> RunSpec:
    """The run spec in ``source`` (a JSON/YAML file or a dict), overridden and validated.

    ``assignments`` are ``"key.path=value"`` strings (values parsed as YAML; agent keys under
    ``agent.``), applied first; ``options`` map :data:`OPTION_KEYS` names to values (``None``:
    not given), applied last. ``eval_episodes=0`` turns evaluation off, and with it the spec's
    target return (unless ``target_return`` is given too, an error).
    """
    raw = copy.deepcopy(dict(source)) if isinstance(source, Mapping) else load_spec_file(source)
    data = as_run_dict(raw)
    options = dict(options or {})
    _prepare_executor(data, assignments, options)
    for assignment in assignments:
        key_path, value = parse_assignment(assignment)
        set_path(data, key_path, value)
    if options.get("eval_episodes") == 0 and options.get("target_return") is None:
        set_path(data, OPTION_KEYS["target_return"], None)  # no evaluation: no target to check
    for option, value in options.items():
        if value is not None:
            set_path(data, OPTION_KEYS[option], value)
    if "environment" not in data and data.get("dataset"):
        data["environment"] = _dataset_environment(data["dataset"])
    if "environment" not in data and "agent" not in raw:
        raise SpecError("the spec is an agent spec: give the environment to train in with --env ENV")
    return construct(RunSpec, data)


def _dataset_environment(dataset: Any) -> str:
    """The environment an offline run evaluates on where its spec names none: its dataset's Gymnasium id."""
    try:
        env_id = dataset_env_id(dataset)
    except RLGraphError as error:
        raise SpecError(str(error), "dataset") from None
    if env_id is None:
        raise SpecError(
            f"the dataset {dataset!r} names no Gymnasium environment: give 'environment'", "environment"
        )
    return env_id


def _prepare_executor(data: dict[str, Any], assignments: Sequence[str], options: Mapping[str, Any]) -> None:
    """Make ``data``'s executor a dict where keys are set inside it; another executor named by option
    drops the file's executor options (they are not the other's)."""
    executor = data.get("executor", "local")
    if options.get("executor") not in (None, executor if isinstance(executor, str) else executor.get("type")):
        data["executor"] = executor = {}
    inside = options.get("executor") or options.get("num_workers")
    if isinstance(executor, str) and (inside or any(a.strip().startswith("executor.") for a in assignments)):
        data["executor"] = {"type": executor}


def as_run_dict(spec: dict[str, Any]) -> dict[str, Any]:
    """A run spec dict: a plain agent spec (top-level ``type``) is wrapped as ``{"agent": spec}``."""
    if "agent" in spec:
        return spec
    if "type" in spec:
        return {"agent": spec}
    raise SpecError(
        "expected a run spec (with an 'agent' key) or an agent spec (with a 'type' key), "
        f"got the keys {sorted(spec)}"
    )


def parse_assignment(text: str) -> tuple[tuple[str, ...], Any]:
    """``"a.b.0.c=value"`` -> ``(("a", "b", "0", "c"), value parsed as YAML)``."""
    import yaml

    key, separator, raw = text.partition("=")
    path = tuple(key.strip().split("."))
    if not separator or not all(path):
        raise SpecError(f"--set expects KEY.PATH=VALUE (e.g. evaluation.episodes=5), got {text!r}")
    try:
        value = load_yaml(raw)
    except yaml.YAMLError:
        value = raw
    except SpecError as error:
        raise SpecError(f"--set {text!r}: {error}") from None
    return path, value


def set_path(data: dict[str, Any], path: Sequence[str], value: Any) -> None:
    """Set ``value`` at the key ``path`` in nested dicts (created as needed) and lists (by index)."""
    node: Any = data
    for depth, key in enumerate(path):
        where = ".".join(path[: depth + 1])
        last = depth == len(path) - 1
        if isinstance(node, list):
            if not key.lstrip("-").isdigit() or not -len(node) <= int(key) < len(node):
                raise SpecError(f"{key!r} is no index of a list of {len(node)} items", where)
            index: Any = int(key)
        elif isinstance(node, dict):
            index = key
            if not last and not isinstance(node.get(key), dict | list):
                if node.get(key) is not None:
                    raise SpecError(f"cannot set a key inside {node[key]!r}", where)
                node[key] = {}
        else:
            raise SpecError(f"cannot set a key inside {node!r}", ".".join(path[:depth]))
        if last:
            node[index] = value
        else:
            node = node[index]


def environment_label(environment: str | Mapping[str, Any]) -> str:
    """A short name for an environment: its Gymnasium id, or its spec's ``env_id`` or type."""
    if isinstance(environment, Mapping):
        environment = (
            environment.get("gym_env") or environment.get("env_id") or environment.get("type") or "env"
        )
    return str(environment)


def agent_label(agent_spec: Mapping[str, Any]) -> str:
    """A short name for an agent: its spec's type (the class name of a ``module:Class`` type)."""
    type_value = agent_spec.get("type", "agent")
    return str(getattr(type_value, "__name__", type_value)).rpartition(":")[2]


#: Where run folders go by default.
RUNS_ROOT = "runs"
#: The run spec's file in a run folder.
RUN_SPEC_FILE = "run.yaml"


def default_run_dir(spec: RunSpec, root: str | os.PathLike = RUNS_ROOT, now: datetime | None = None) -> Path:
    """A new, empty run folder ``runs/<agent type>-<env id>-<UTC timestamp>``, with a counter appended
    where that exists. It is created here, atomically: runs started at the same second (by several
    processes) each get a folder of their own."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    name = _file_name(f"{agent_label(spec.agent)}-{environment_label(spec.environment)}-{stamp}")
    candidate, number = Path(root) / name, 1
    while True:
        try:
            candidate.mkdir(parents=True)
            return candidate
        except FileExistsError:
            number += 1
            candidate = Path(root) / f"{name}-{number}"


def _file_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")


def parse_grid(assignments: Sequence[str]) -> list[list[str]]:
    """Each ``"key.path=v1,v2"`` as its alternatives ``["key.path=v1", "key.path=v2"]`` (commas inside
    brackets or braces belong to a value: ``"net=[64,64],[32]"`` has two)."""
    grid = []
    for assignment in assignments:
        key, _ = parse_assignment(assignment)
        raw = assignment.partition("=")[2]
        values = _split_top_level(raw)
        if not values or any(not v.strip() for v in values):
            raise SpecError(f"--set {assignment!r}: empty value in the list")
        grid.append([f"{'.'.join(key)}={value.strip()}" for value in values])
    return grid


def _split_top_level(text: str) -> list[str]:
    """``text`` split at commas outside brackets, braces and quotes."""
    parts: list[str] = []
    current: list[str] = []
    depth, quote = 0, ""
    for char in text:
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
    parts.append("".join(current))
    return parts
