"""The plugin registry: entry points found in distribution metadata, their status, lazy loading.

Discovery reads metadata only, once per process, on first use (``importlib.metadata``). A plugin's
module is imported when the plugin is first loaded, by its entry point's ``load()``. Failures are
remembered per plugin, so one broken plugin is reported while the others keep working; conflicts
(one name in two distributions) and disabled plugins are resolved before anything is imported.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import importlib.machinery
import importlib.metadata
import importlib.util
import os
import re
import sys
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

import attrs
from packaging.requirements import InvalidRequirement, Requirement

from rlgraph import __version__
from rlgraph.errors import PluginConflictError, PluginError, PluginLoadError, PluginNotFoundError
from rlgraph.plugins.hookspecs import PLUGIN_API_VERSION
from rlgraph.plugins.providers import install_hint, normalize_distribution, provider_of
from rlgraph.utils.naming import normalize_name, suggestion_text

#: The entry-point groups plugins register in, and what each holds.
GROUPS: dict[str, str] = {
    "rlgraph.backends": "Numeric backends (torch, tf): ops, variables, gradients, compilation, via the backend hooks.",
    "rlgraph.components": "Component classes a spec names by its type: memories, layers, optimizers, decays, ...",
    "rlgraph.agents": "Agent classes an agent spec names by its type: dqn, ppo, sac, ...",
    "rlgraph.executors": "Executors that run agents across workers and processes (Ray).",
    "rlgraph.environments": "Environment classes an environment spec names by its type.",
    "rlgraph.callbacks": "Training callbacks (observers of the trainer's events) a run spec names in 'callbacks'.",
    "rlgraph.sweep_launchers": "How 'rlgraph sweep' runs its trials: local processes (the core's), Ray Tune, ...",
    "rlgraph.learner_launchers": "Where a learner group's other learners run: local processes (the core's), Ray actors, ...",
    "rlgraph.test_cases": "Components' parity and property cases, which 'rlgraph certify' and the test suites run.",
}

#: Comma-separated plugins to ignore: ``name``, ``group:name`` or a distribution name.
DISABLE_VARIABLE = "RLGRAPH_DISABLE_PLUGINS"
#: The distribution name of plugins added with :func:`register`.
RUNTIME = "<runtime>"
#: The module attribute naming the plugin API a plugin was written for (``"MAJOR.MINOR"``).
API_ATTRIBUTE = "RLGRAPH_PLUGIN_API"

Status = Literal["ok", "disabled", "conflict", "broken", "incompatible", "loaded"]


@attrs.frozen
class PluginInfo:
    """One plugin as installed: where it comes from and whether it can be used.

    ``value`` is the entry point's ``"module:attr"``; ``error`` says why a plugin is not usable
    (broken, conflict, disabled, incompatible), else None.
    """

    group: str
    name: str
    value: str
    distribution: str
    version: str
    status: Status
    error: str | None = None


@attrs.frozen(eq=False)
class _Entry:
    """One plugin found: an installed entry point, or an object given to :func:`register`."""

    group: str
    name: str
    value: str
    distribution: str
    version: str = ""
    requires: tuple[str, ...] = ()
    entry_point: importlib.metadata.EntryPoint | None = None
    obj: Any = None

    @property
    def key(self) -> tuple[str, str, str]:
        return self.group, normalize_distribution(self.distribution), self.name

    @property
    def origin(self) -> str:
        return f"{self.distribution} {self.version}".strip()

    @property
    def label(self) -> str:
        return f"plugin {self.name!r} in {self.group} (from {self.origin})"


class _State:
    """Everything the registry remembers in this process."""

    def __init__(self) -> None:
        self.installed: dict[str, list[_Entry]] | None = None
        self.runtime: dict[tuple[str, str, str], _Entry] = {}
        self.loaded: dict[tuple[str, str, str], Any] = {}
        self.failed: dict[tuple[str, str, str], Exception] = {}


_state = _State()


# -- public API -----------------------------------------------------------------------------------


def list_plugins(group: str | None = None, check: bool = False) -> list[PluginInfo]:
    """Every plugin in ``group`` (all groups if None), sorted by group and name.

    Reads distribution metadata only and never imports a plugin, unless ``check`` is true:
    then each usable plugin is imported and import errors are reported as ``"broken"``.
    """
    full_group = _full_group(group) if group is not None else None
    if check:
        _import_all(full_group)
    return _infos(full_group, static_checks=not check)


def load(group: str, name: str) -> Any:
    """The object plugin ``name`` in ``group`` names, imported on first use and cached.

    Names match case-, dash- and underscore-insensitively.
    """
    return _load_entry(_resolve(_full_group(group), name))


def resolve_name(group: str, name: str) -> str:
    """The registered name :func:`load` would load for ``name``, without importing it.

    Raises as :func:`load` does when the plugin is missing, disabled or claimed twice.
    """
    return _resolve(_full_group(group), name).name


def names(group: str) -> list[str]:
    """The names of the enabled plugins in ``group``, sorted."""
    entries = _entries(_full_group(group))
    rules = _disable_rules()
    return sorted({e.name for e in entries if not _is_disabled(e, rules)}, key=normalize_name)


def find_by_attr(group: str, attr: str) -> PluginInfo | None:
    """The plugin whose entry point names ``attr`` (``"DQNAgent"`` in ``"pkg.dqn:DQNAgent"``), or None."""
    for info in _infos(_full_group(group), static_checks=False):
        if info.value.partition(":")[2] == attr:
            return info
    return None


def register(group: str, name: str, obj: Any, distribution: str = RUNTIME) -> None:
    """Add ``obj`` as plugin ``name`` in ``group`` for this process (tests, notebooks).

    It is listed, loaded and checked for conflicts like an installed plugin. Registering the
    same name for the same ``distribution`` again replaces it.
    """
    full_group = _full_group(group)
    entry = _Entry(full_group, name, _describe(obj), distribution, obj=obj)
    _state.runtime[(full_group, normalize_name(name), normalize_distribution(distribution))] = entry


def unregister(group: str, name: str) -> None:
    """Remove the plugins :func:`register` added as ``name`` in ``group``."""
    full_group = _full_group(group)
    keys = [k for k in _state.runtime if k[:2] == (full_group, normalize_name(name))]
    if not keys:
        raise PluginNotFoundError(
            f"no plugin {name!r} was registered in {full_group} in this process", group=full_group, name=name
        )
    for key in keys:
        del _state.runtime[key]


def check_plugin_api(obj: Any, label: str) -> None:
    """Refuse ``obj`` unless it (or its module) declares a plugin API this core provides.

    ``RLGRAPH_PLUGIN_API = "MAJOR.MINOR"``: the major version must equal the core's, the minor
    version must not be newer.
    """
    declared = getattr(obj, API_ATTRIBUTE, None)
    if declared is None:
        declared = getattr(sys.modules.get(getattr(obj, "__module__", None) or ""), API_ATTRIBUTE, None)
    provided = "{}.{}".format(*PLUGIN_API_VERSION)
    if declared is None:
        raise PluginLoadError(
            f"{label} does not declare the plugin API it was written for; "
            f'add {API_ATTRIBUTE} = "{provided}" to its module'
        )
    match = re.fullmatch(r"(\d+)\.(\d+)", declared) if isinstance(declared, str) else None
    if match is None:
        raise PluginLoadError(f"{label}: {API_ATTRIBUTE} must be a 'MAJOR.MINOR' string, got {declared!r}")
    major, minor = int(match[1]), int(match[2])
    if major != PLUGIN_API_VERSION[0] or minor > PLUGIN_API_VERSION[1]:
        raise PluginLoadError(
            f"{label} was written for plugin API {declared}, but rlgraph {__version__} provides plugin API "
            f"{provided} (it accepts {PLUGIN_API_VERSION[0]}.0 to {provided}); "
            f"install versions of rlgraph and of {label} that match"
        )


def reset_cache() -> None:
    """Forget discovered entry points and what was loaded or failed (not :func:`register`-ed plugins)."""
    _state.installed = None
    _state.loaded.clear()
    _state.failed.clear()
    importlib.invalidate_caches()


# -- discovery ------------------------------------------------------------------------------------


def _full_group(group: str) -> str:
    full = group if group.startswith("rlgraph.") else f"rlgraph.{group}"
    if full not in GROUPS:
        short = [g.removeprefix("rlgraph.") for g in GROUPS]
        raise PluginError(
            f"unknown plugin group {group!r}; the groups are {', '.join(short)}."
            + suggestion_text(group, short)
        )
    return full


def _installed() -> dict[str, list[_Entry]]:
    if _state.installed is None:
        _state.installed = _discover()
    return _state.installed


def _discover() -> dict[str, list[_Entry]]:
    """Entry points in :data:`GROUPS` of every distribution, each distribution once (first on sys.path)."""
    found: dict[str, list[_Entry]] = {group: [] for group in GROUPS}
    seen: set[str] = set()
    for dist in importlib.metadata.distributions():
        text = dist.read_text("entry_points.txt")
        if not text or "[rlgraph." not in text:
            continue
        metadata = dist.metadata
        name = metadata["Name"]
        if not name or normalize_distribution(name) in seen:
            continue
        seen.add(normalize_distribution(name))
        requires = tuple(dist.requires or ())
        for ep in dist.entry_points:
            if ep.group in found:
                found[ep.group].append(
                    _Entry(ep.group, ep.name, ep.value, name, metadata["Version"] or "", requires, ep)
                )
    return found


def _entries(group: str | None) -> list[_Entry]:
    groups = [group] if group else list(GROUPS)
    installed = _installed()
    runtime = [e for e in _state.runtime.values() if e.group in groups]
    return [e for g in groups for e in installed[g]] + runtime


def _describe(obj: Any) -> str:
    module = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None)
    if module and qualname:
        return f"{module}:{qualname}"
    return getattr(obj, "__name__", None) or repr(obj)


# -- status -------------------------------------------------------------------------------------


def _disable_rules() -> list[tuple[str | None, str]]:
    """``(full group or None, normalized name)`` for each entry of RLGRAPH_DISABLE_PLUGINS."""
    rules: list[tuple[str | None, str]] = []
    for token in filter(None, (t.strip() for t in os.environ.get(DISABLE_VARIABLE, "").split(","))):
        group, _, name = token.rpartition(":")
        full = f"rlgraph.{group.removeprefix('rlgraph.')}" if group else None
        rules.append((full, normalize_name(name)))
    return rules


def _is_disabled(entry: _Entry, rules: Iterable[tuple[str | None, str]]) -> bool:
    name = normalize_name(entry.name)
    distribution = normalize_distribution(entry.distribution)
    for group, token in rules:
        if group is not None:
            if group == entry.group and token == name:
                return True
        elif token == name or token.replace(".", "") == distribution:
            return True
    return False


def _conflicts(entries: Iterable[_Entry]) -> dict[tuple[str, str], list[_Entry]]:
    """Enabled entries grouped by (group, normalized name) where more than one distribution claims it."""
    claims: dict[tuple[str, str], list[_Entry]] = defaultdict(list)
    for entry in entries:
        claims[(entry.group, normalize_name(entry.name))].append(entry)
    return {
        key: found
        for key, found in claims.items()
        if len({normalize_distribution(e.distribution) for e in found}) > 1
    }


def _infos(group: str | None, static_checks: bool) -> list[PluginInfo]:
    entries = _entries(group)
    rules = _disable_rules()
    disabled = [e for e in entries if _is_disabled(e, rules)]
    conflicts = _conflicts(e for e in entries if e not in disabled)
    infos = []
    for entry in entries:
        status: Status
        error: str | None
        if entry in disabled:
            status, error = "disabled", f"disabled by {DISABLE_VARIABLE}"
        else:
            rivals = conflicts.get((entry.group, normalize_name(entry.name)), [])
            status, error = _status(entry, rivals, static_checks)
        infos.append(
            PluginInfo(entry.group, entry.name, entry.value, entry.distribution, entry.version, status, error)
        )
    return sorted(infos, key=lambda i: (i.group, normalize_name(i.name), i.distribution))


def _status(entry: _Entry, rivals: list[_Entry], static_checks: bool) -> tuple[Status, str | None]:
    if rivals:
        others = ", ".join(e.origin for e in rivals if e is not entry)
        return "conflict", f"name also claimed by {others}"
    if entry.key in _state.failed:
        return "broken", _error_text(_state.failed[entry.key])
    incompatibility = _incompatibility(entry.requires)
    if incompatibility:
        return "incompatible", incompatibility
    if entry.key in _state.loaded or entry.entry_point is None:
        return "loaded", None
    problem = _static_problem(entry.entry_point) if static_checks else None
    return ("broken", problem) if problem else ("ok", None)


def _error_text(error: Exception) -> str:
    return f"{type(error).__name__}: {error}"


# -- loading --------------------------------------------------------------------------------------


def _resolve(group: str, name: str) -> _Entry:
    entries = _entries(group)
    matches = [e for e in entries if normalize_name(e.name) == normalize_name(name)]
    if not matches:
        raise _not_found(group, name, entries)
    rules = _disable_rules()
    enabled = [e for e in matches if not _is_disabled(e, rules)]
    if not enabled:
        raise PluginLoadError(
            f"{matches[0].label} is disabled by {DISABLE_VARIABLE}={os.environ.get(DISABLE_VARIABLE, '')!r}; "
            f"remove {name!r} (or its group:name, or its distribution) from that variable to re-enable it"
        )
    if len({normalize_distribution(e.distribution) for e in enabled}) > 1:
        raise _conflict_error(group, name, enabled)
    return next((e for e in enabled if e.name == name), enabled[0])


def _load_entry(entry: _Entry) -> Any:
    if entry.entry_point is None:
        return entry.obj
    if entry.key in _state.loaded:
        return _state.loaded[entry.key]
    if entry.key in _state.failed:
        error = _state.failed[entry.key]
        raise PluginLoadError(f"{entry.label} failed to load: {_error_text(error)}") from error
    try:
        obj = entry.entry_point.load()
    except Exception as error:
        _state.failed[entry.key] = error
        raise PluginLoadError(f"{entry.label} failed to load: {_error_text(error)}") from error
    _state.loaded[entry.key] = obj
    return obj


def _import_all(group: str | None) -> None:
    entries = _entries(group)
    rules = _disable_rules()
    enabled = [e for e in entries if not _is_disabled(e, rules)]
    conflicts = _conflicts(enabled)
    for entry in enabled:
        if (entry.group, normalize_name(entry.name)) not in conflicts:
            with contextlib.suppress(PluginLoadError):
                _load_entry(entry)


def _not_found(group: str, name: str, entries: list[_Entry]) -> PluginNotFoundError:
    registered = sorted({e.name for e in entries}, key=normalize_name)
    message = f"no plugin named {name!r} in {group}; "
    if registered:
        message += f"installed: {', '.join(registered)}." + suggestion_text(name, registered)
    else:
        message += "none is installed."
    provider = provider_of(group, name)
    if provider:
        distribution = provider.partition("[")[0]  # without the extra it names
        if normalize_distribution(distribution) in _installed_distributions():
            message += (
                f" {distribution} is installed but has no {name!r}; upgrade it: "
                f"{install_hint(distribution, upgrade=True)}"
            )
        else:
            message += f" {name!r} is provided by {provider}: {install_hint(provider)}"
    return PluginNotFoundError(message, group=group, name=name)


def _installed_distributions() -> set[str]:
    return {normalize_distribution(e.distribution) for found in _installed().values() for e in found}


def _conflict_error(group: str, name: str, entries: list[_Entry]) -> PluginConflictError:
    owners = " and ".join(f"{e.origin} ({e.value})" for e in entries)
    example = entries[-1].distribution
    return PluginConflictError(
        f"plugin {name!r} in {group} is provided by several distributions: {owners}. "
        f"Uninstall one of them (pip uninstall {example}) or disable one by its distribution name "
        f"({DISABLE_VARIABLE}={example})"
    )


# -- checks without importing ---------------------------------------------------------------------


def _static_problem(entry_point: importlib.metadata.EntryPoint) -> str | None:
    """Why ``entry_point`` cannot load, found from files alone (no import), or None."""
    spec = _find_spec(entry_point.module)
    if spec is None:
        return f"module {entry_point.module!r} not found"
    origin = spec.origin
    if not entry_point.attr or origin is None or not origin.endswith(".py"):
        return None
    try:
        tree = ast.parse(Path(origin).read_bytes(), filename=origin)
    except (SyntaxError, ValueError) as error:
        return f"{origin} does not parse: {error}"
    except OSError as error:
        return f"cannot read {origin}: {error}"
    defined = _module_names(tree)
    attr = entry_point.attr.split(".")[0]
    if defined is None or attr in defined:
        return None
    return f"module {entry_point.module!r} defines no {attr!r}"


def _find_spec(module: str) -> importlib.machinery.ModuleSpec | None:
    """The spec of ``module``, found without importing it or its parent packages."""
    top, *rest = module.split(".")
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return None
    for depth in range(len(rest)):
        if spec is None or spec.submodule_search_locations is None:
            return None
        name = ".".join([top, *rest[: depth + 1]])
        spec = importlib.machinery.PathFinder.find_spec(name, list(spec.submodule_search_locations))
    return spec


def _module_names(tree: ast.Module) -> set[str] | None:
    """The names a module's top level binds, or None when it cannot tell (``*`` import, ``__getattr__``)."""
    defined: set[str] = set()
    pending: list[ast.AST] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            defined.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                if alias.name == "*":
                    return None
                defined.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            defined.add(node.id)
        elif not isinstance(node, ast.Lambda):
            pending.extend(ast.iter_child_nodes(node))
    return None if "__getattr__" in defined else defined


def _incompatibility(requires: Iterable[str]) -> str | None:
    """Why a distribution's Requires-Dist on rlgraph (not an extra's) excludes the installed version, or None."""
    for line in requires:
        try:
            requirement = Requirement(line)
        except InvalidRequirement:
            continue
        if normalize_distribution(requirement.name) != "rlgraph" or "extra" in str(requirement.marker or ""):
            continue
        if not requirement.specifier.contains(__version__, prereleases=True):
            return f"requires rlgraph {requirement.specifier}, but rlgraph {__version__} is installed"
    return None
