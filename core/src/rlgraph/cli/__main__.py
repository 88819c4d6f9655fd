"""``python -m rlgraph.cli``: the ``rlgraph`` command."""

from __future__ import annotations

from rlgraph.cli import main

raise SystemExit(main())
