"""Agents. The base class lives here; concrete agents come from plugins.

``from rlgraph.agents import DQNAgent`` finds the ``rlgraph.agents`` entry point whose object
is named ``DQNAgent`` (without importing any other plugin); when no installed distribution
provides it, the ImportError names the one to install.
"""

from __future__ import annotations

from typing import Any

from rlgraph.agents.agent import Agent

__all__ = ["Agent"]


def __getattr__(name: str) -> Any:
    if name.startswith("_"):
        raise AttributeError(name)
    from rlgraph import plugins
    from rlgraph.plugins import providers

    info = plugins.find_by_attr("rlgraph.agents", name)
    if info is not None:
        value = plugins.load("rlgraph.agents", info.name)
        globals()[name] = value
        return value
    known = providers.KNOWN_CLASS_NAMES.get(name)
    if known is not None:
        distribution = known[2]
        raise ImportError(
            f"{name} is provided by the distribution {distribution!r}, which is not installed: "
            f"{providers.install_hint(distribution)}",
            name=f"rlgraph.agents.{name}",
        )
    raise AttributeError(f"module 'rlgraph.agents' has no attribute {name!r}")
