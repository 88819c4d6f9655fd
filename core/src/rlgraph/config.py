"""User settings and the backend choice.

The settings file is ``$RLGRAPH_HOME/rlgraph.json`` (``~/.rlgraph/rlgraph.json`` by default),
with RLgraph's keys ``BACKEND`` and ``DISTRIBUTED_BACKEND``. RLgraph reads it when it exists
and never creates or writes it.
"""

from __future__ import annotations

import importlib.metadata
import json
import logging
import os
from pathlib import Path

from rlgraph.errors import BackendError, PluginNotFoundError, SpecError
from rlgraph.plugins.providers import KNOWN_DISTRIBUTED_BACKENDS, install_hint, provider_of
from rlgraph.plugins.registry import names, resolve_name
from rlgraph.utils.naming import normalize_name, suggestion_text

CONFIG_FILE = "rlgraph.json"
CONFIG_KEYS = ("BACKEND", "DISTRIBUTED_BACKEND")
BACKEND_VARIABLE = "RLGRAPH_BACKEND"
DISTRIBUTED_BACKEND_VARIABLE = "RLGRAPH_DISTRIBUTED_BACKEND"
_BACKENDS = "rlgraph.backends"
_LOCAL = ("local", "none")
#: The backend chosen when several are installed and nothing names one: the first of these installed
#: (others after them, by name).
DEFAULT_BACKEND_ORDER = ("torch", "tf", "jax")
_log = logging.getLogger("rlgraph")
_announced: set[str] = set()  # default choices already announced in this process


def rlgraph_home() -> Path:
    """RLgraph's settings folder: ``$RLGRAPH_HOME``, else ``~/.rlgraph``."""
    return Path(os.environ.get("RLGRAPH_HOME") or "~/.rlgraph").expanduser()


def config_path() -> Path:
    """The settings file, whether or not it exists."""
    return rlgraph_home() / CONFIG_FILE


def load_config() -> dict[str, str | None]:
    """The settings in :func:`config_path`, or ``{}`` when there is no such file."""
    path = config_path()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as error:
        raise SpecError(f"cannot read {path}: {error}") from error
    from rlgraph.specs.loading import unique_keys

    try:
        settings = json.loads(text, object_pairs_hook=unique_keys)
    except json.JSONDecodeError as error:
        raise SpecError(f"{path} is not valid JSON: {error}") from error
    except SpecError as error:
        raise SpecError(f"{path}: {error}") from None
    if not isinstance(settings, dict):
        raise SpecError(f"{path} must hold a JSON object, not {type(settings).__name__}")
    for key, value in settings.items():
        if key not in CONFIG_KEYS:
            raise SpecError(
                f"unknown key in {path}; the keys are {', '.join(CONFIG_KEYS)}."
                + suggestion_text(key, CONFIG_KEYS),
                path=key,
            )
        if value is not None and not isinstance(value, str):
            raise SpecError(f"expected a string or null in {path}, got {value!r}", path=key)
    return settings


def resolve_backend(explicit: str | None = None) -> str:
    """The registered name of the backend to build with.

    The first of: ``explicit`` (a spec's ``backend``), ``$RLGRAPH_BACKEND``, ``BACKEND`` in the
    settings file, the only installed backend; among several, the first of
    :data:`DEFAULT_BACKEND_ORDER` (one line on the ``rlgraph`` logger says so, once per process).
    """
    choice, source = _choice(explicit, BACKEND_VARIABLE, "BACKEND")
    if choice is None:
        return _default_backend()
    try:
        return resolve_name(_BACKENDS, choice)
    except PluginNotFoundError as error:
        alias = _installed_alias(choice)
        if alias is not None:
            return alias
        raise PluginNotFoundError(
            f"{error} (chosen by {source})", group=error.group, name=error.name
        ) from None


def resolve_distributed_backend(explicit: str | None = None) -> str | None:
    """The distributed backend (``"ray"``), or None to run locally.

    The first of: ``explicit``, ``$RLGRAPH_DISTRIBUTED_BACKEND``, ``DISTRIBUTED_BACKEND`` in
    the settings file; None when none is set.
    """
    choice, source = _choice(explicit, DISTRIBUTED_BACKEND_VARIABLE, "DISTRIBUTED_BACKEND")
    if choice is None or normalize_name(choice) in _LOCAL:
        return None
    name = normalize_name(choice)
    distribution = KNOWN_DISTRIBUTED_BACKENDS.get(name)
    if distribution is None:
        known = [*KNOWN_DISTRIBUTED_BACKENDS, *_LOCAL]
        raise BackendError(
            f"unknown distributed backend {choice!r} (chosen by {source}); use one of {', '.join(known)}."
            + suggestion_text(choice, known)
        )
    try:
        importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        raise BackendError(
            f"distributed backend {choice!r} (chosen by {source}) needs {distribution}: "
            f"{install_hint(distribution)}"
        ) from None
    return name


def _choice(explicit: str | None, variable: str, key: str) -> tuple[str | None, str]:
    """The first value set, and where it was set."""
    if explicit:
        return explicit, "the spec"
    if os.environ.get(variable):
        return os.environ[variable], f"${variable}"
    value = load_config().get(key)
    if value:
        return value, f"{key} in {config_path()}"
    return None, ""


def _default_backend() -> str:
    """The installed backend, or the first of :data:`DEFAULT_BACKEND_ORDER` among several (logged once at
    INFO level: the choice is no warning, and a run's display and summary name the backend it used)."""
    installed = names(_BACKENDS)
    if len(installed) == 1:
        return installed[0]
    if not installed:
        raise BackendError(
            "no backend is installed; install one: "
            f"{install_hint('rlgraph-torch')} (PyTorch) or {install_hint('rlgraph-tf')} (TensorFlow)"
        )
    ranked = installed_backends()
    chosen, other = ranked[0], ranked[1]
    if chosen not in _announced:
        _announced.add(chosen)
        _log.info(
            "rlgraph: several backends are installed (%s); using %s (the default order: %s, then others by "
            'name). Choose another with --backend %s, "backend": "%s" in the agent spec, %s=%s, or '
            '{"BACKEND": "%s"} in %s.',
            ", ".join(installed),
            chosen,
            ", ".join(DEFAULT_BACKEND_ORDER),
            other,
            other,
            BACKEND_VARIABLE,
            other,
            other,
            config_path(),
        )
    return chosen


def installed_backends() -> list[str]:
    """The installed backends, in :data:`DEFAULT_BACKEND_ORDER` (others after them, by name)."""
    return sorted(names(_BACKENDS), key=lambda name: (_rank(name), name))


def _rank(name: str) -> int:
    provider = provider_of(_BACKENDS, name)
    for rank, preferred in enumerate(DEFAULT_BACKEND_ORDER):
        if name == preferred or (provider and provider == provider_of(_BACKENDS, preferred)):
            return rank
    return len(DEFAULT_BACKEND_ORDER)


def _installed_alias(choice: str) -> str | None:
    """The installed backend another spelling names (RLgraph's ``"pytorch"`` -> ``"torch"``), or None."""
    provider = provider_of(_BACKENDS, choice)
    same = [name for name in names(_BACKENDS) if provider and provider_of(_BACKENDS, name) == provider]
    return same[0] if len(same) == 1 else None
