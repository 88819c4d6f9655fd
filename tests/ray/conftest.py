"""Ray tests: one embedded Ray cluster for the whole session (started by the first executor or test that
needs it, through rlgraph_ray.cluster.connect), shut down at the end."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(scope="session", autouse=True)
def _ray_shutdown():
    yield
    import ray

    if ray.is_initialized():
        ray.shutdown()
