"""What to install for a missing plugin or extra: which distribution provides which plugin name, and the one
command every "pip install X" hint of RLgraph gives (:func:`install_hint`).

The table covers the distributions built in this project. It is consulted only when a name is
not installed, to tell the user what to install; it never decides what is loaded.
"""

from __future__ import annotations

import functools
import re
import tomllib
from pathlib import Path

from rlgraph.utils.naming import normalize_name

_TORCH = "rlgraph-torch"
_TF = "rlgraph-tf"
_ALGOS = "rlgraph-algos"
_RAY = "rlgraph-ray"
_MEMORIES = "rlgraph-memories"
_NETWORKS = "rlgraph-networks"
_TRACKERS = "rlgraph-trackers"

_AGENTS = (
    "dqn",
    "apex",
    "dqfd",
    "impala",
    "single_impala",
    "ppo",
    "sac",
    "actor_critic",
    "ddpg",
    "td3",
    "categorical_dqn",
    "r2d2",
    "random",
)
_MEMORY_COMPONENTS = ("replay", "replay_memory", "prioritized_replay", "ring_buffer", "fifo_queue")
_NETWORK_COMPONENTS = (
    "neural_network",
    "dense",
    "conv2d",
    "lstm",
    "policy",
    "dueling_policy",
    "preprocessor_stack",
    "reshape",
    "grayscale",
    "image_resize",
    "divide",
    "multiply",
    "clip",
    "convert_type",
    "moving_standardize",
    "sequence",
    "epsilon_exploration",
    "adam",
    "sgd",
    "rmsprop",
    "adagrad",
    "linear_decay",
    "exponential_decay",
    "polynomial_decay",
    "constant_decay",
    "categorical",
    "normal",
    "beta",
    "synchronizable",
)


def _table(distribution: str, names: tuple[str, ...]) -> dict[str, str]:
    return {normalize_name(name): distribution for name in names}


#: group -> normalized plugin name -> the distribution that provides it.
KNOWN_PROVIDERS: dict[str, dict[str, str]] = {
    "rlgraph.backends": {**_table(_TORCH, ("torch", "pytorch")), **_table(_TF, ("tf", "tensorflow"))},
    "rlgraph.agents": _table(_ALGOS, _AGENTS),
    "rlgraph.executors": {
        **_table(_RAY, ("apex", "sync_batch", "impala")),
    },
    "rlgraph.components": {**_table(_MEMORIES, _MEMORY_COMPONENTS), **_table(_NETWORKS, _NETWORK_COMPONENTS)},
    "rlgraph.environments": {},
    "rlgraph.sweep_launchers": _table(_RAY, ("ray_tune",)),
    # A tracker's callback needs its extra (the tracker's library) too.
    "rlgraph.callbacks": {normalize_name(name): f"{_TRACKERS}[{name}]" for name in ("mlflow", "wandb")},
    "rlgraph.test_cases": {
        **_table(_MEMORIES, ("rlgraph_memories",)),
        **_table(_NETWORKS, ("rlgraph_networks",)),
        **_table(_ALGOS, ("rlgraph_algos",)),
    },
}

#: Class names users import from RLgraph -> (group, plugin name, distribution).
KNOWN_CLASS_NAMES: dict[str, tuple[str, str, str]] = {
    "DQNAgent": ("rlgraph.agents", "dqn", _ALGOS),
    "ApexAgent": ("rlgraph.agents", "apex", _ALGOS),
    "DQFDAgent": ("rlgraph.agents", "dqfd", _ALGOS),
    "IMPALAAgent": ("rlgraph.agents", "impala", _ALGOS),
    "SingleIMPALAAgent": ("rlgraph.agents", "single_impala", _ALGOS),
    "PPOAgent": ("rlgraph.agents", "ppo", _ALGOS),
    "SACAgent": ("rlgraph.agents", "sac", _ALGOS),
    "ActorCriticAgent": ("rlgraph.agents", "actor_critic", _ALGOS),
    "DDPGAgent": ("rlgraph.agents", "ddpg", _ALGOS),
    "TD3Agent": ("rlgraph.agents", "td3", _ALGOS),
    "RandomAgent": ("rlgraph.agents", "random", _ALGOS),
    "ApexExecutor": ("rlgraph.executors", "apex", _RAY),
    "SyncBatchExecutor": ("rlgraph.executors", "sync_batch", _RAY),
    "IMPALAExecutor": ("rlgraph.executors", "impala", _RAY),
    "ReplayMemory": ("rlgraph.components", "replay_memory", _MEMORIES),
    "PrioritizedReplay": ("rlgraph.components", "prioritized_replay", _MEMORIES),
    "RingBuffer": ("rlgraph.components", "ring_buffer", _MEMORIES),
    "FIFOQueue": ("rlgraph.components", "fifo_queue", _MEMORIES),
    "NeuralNetwork": ("rlgraph.components", "neural_network", _NETWORKS),
    "DenseLayer": ("rlgraph.components", "dense", _NETWORKS),
    "Conv2DLayer": ("rlgraph.components", "conv2d", _NETWORKS),
    "LSTMLayer": ("rlgraph.components", "lstm", _NETWORKS),
    "Policy": ("rlgraph.components", "policy", _NETWORKS),
    "DuelingPolicy": ("rlgraph.components", "dueling_policy", _NETWORKS),
    "PreprocessorStack": ("rlgraph.components", "preprocessor_stack", _NETWORKS),
    "EpsilonExploration": ("rlgraph.components", "epsilon_exploration", _NETWORKS),
}

#: Distributed backends (RLgraph's ``DISTRIBUTED_BACKEND``) -> the distribution that provides them.
KNOWN_DISTRIBUTED_BACKENDS: dict[str, str] = {"ray": _RAY}


def provider_of(group: str, name: str) -> str | None:
    """The distribution known to provide ``name`` in the full entry-point ``group`` (with the extra it
    needs: ``"rlgraph-trackers[mlflow]"``), or None."""
    return KNOWN_PROVIDERS.get(group, {}).get(normalize_name(name))


def install_hint(distribution: str, upgrade: bool = False) -> str:
    """The command that installs ``distribution``, with the extra it names (``"rlgraph[offline]"``,
    ``"rlgraph-trackers[mlflow]"``). Run from RLgraph's source checkout (the installed rlgraph is an editable
    one of it, or the working folder is it), the checkout's own: ``pip install -c constraints.txt -e
    "core[offline]"``, its paths absolute unless the working folder is the checkout. Otherwise the published
    name: ``pip install "rlgraph[offline]"`` (``--upgrade`` with ``upgrade``)."""
    root = checkout_root()
    folder = source_folders(root).get(normalize_distribution(distribution)) if root else None
    if root is None or folder is None:
        return f"pip install {'--upgrade ' if upgrade else ''}{_quoted(distribution)}"
    extra = distribution[distribution.index("[") :] if "[" in distribution else ""
    shown = Path(".") if root == Path.cwd().resolve() else root
    constraints, source = (shown / "constraints.txt").as_posix(), (shown / folder).as_posix() + extra
    return f"pip install -c {_quoted(constraints)} -e {_quoted(source)}"


def checkout_root(module_file: str = __file__) -> Path | None:
    """RLgraph's source checkout, if this rlgraph (``module_file``: this module) is an editable install of one
    or the working folder is one: the folder with ``constraints.txt`` and ``core/pyproject.toml``."""
    here = Path(module_file).resolve().parents
    candidates = [here[4]] if len(here) > 4 else []  # core/src/rlgraph/plugins/providers.py
    for candidate in [*candidates, Path.cwd().resolve()]:
        if (candidate / "constraints.txt").is_file() and (candidate / "core" / "pyproject.toml").is_file():
            return candidate
    return None


@functools.cache
def source_folders(root: Path) -> dict[str, str]:
    """The checkout's distributions (normalized names) -> their folders, relative to ``root``, from their
    ``pyproject.toml`` files."""
    folders = {}
    for pyproject in [*root.glob("*/pyproject.toml"), *root.glob("plugins/*/pyproject.toml")]:
        try:
            name = tomllib.loads(pyproject.read_text())["project"]["name"]
        except (OSError, KeyError, tomllib.TOMLDecodeError):
            continue
        folders[normalize_distribution(name)] = pyproject.parent.relative_to(root).as_posix()
    return folders


def normalize_distribution(name: str) -> str:
    """A distribution's name as pip compares it, without an extra it names (``rlgraph_networks``,
    ``RLgraph-Networks[test]``: the same)."""
    return normalize_name(name.partition("[")[0]).replace(".", "")


def _quoted(argument: str) -> str:
    """``argument`` quoted for the shell where it needs it (an extra's brackets, a space)."""
    return f'"{argument}"' if re.search(r"[\[\]\s]", argument) else argument
