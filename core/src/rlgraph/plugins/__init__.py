"""Plugins: found through entry points, listed from metadata, imported on first use.

Importing this package scans nothing; discovery happens once, on first use.
"""

from __future__ import annotations

from rlgraph.plugins.hookspecs import PLUGIN_API_VERSION, hookimpl
from rlgraph.plugins.registry import (
    GROUPS,
    PluginInfo,
    check_plugin_api,
    find_by_attr,
    list_plugins,
    load,
    names,
    register,
    reset_cache,
    resolve_name,
    unregister,
)

__all__ = [
    "GROUPS",
    "PLUGIN_API_VERSION",
    "PluginInfo",
    "check_plugin_api",
    "find_by_attr",
    "hookimpl",
    "list_plugins",
    "load",
    "names",
    "register",
    "reset_cache",
    "resolve_name",
    "unregister",
]
