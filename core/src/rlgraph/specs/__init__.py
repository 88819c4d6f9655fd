"""Specs: objects built from dicts, JSON or YAML files, type names or instances, validated strictly.

A spec's ``type`` names a registered plugin or an explicit ``"package.module:ClassName"``. Keys are
checked against the built class's spec (attrs + cattrs); errors give the full key path.
"""

from __future__ import annotations

from rlgraph.specs.loading import SPEC_FILE_SUFFIXES, load_spec_file
from rlgraph.specs.specifiable import Specifiable, from_spec

__all__ = ["SPEC_FILE_SUFFIXES", "Specifiable", "from_spec", "load_spec_file"]
