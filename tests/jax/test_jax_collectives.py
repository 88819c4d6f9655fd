"""The JAX collective's gloo takes the learner's address through a private API of jax (``jax._src``): probed at
import, with JAX's own gloo (on the address this machine's name resolves to) where the probe fails."""

from __future__ import annotations

import pytest

pytest.importorskip("jax")


def test_the_private_gloo_api_is_probed_and_missing_it_falls_back_to_jaxs_own_gloo(monkeypatch):
    from jax._src.lib import _jax

    from rlgraph_jax import collectives

    assert collectives.GLOO_ON_HOST  # the jax this project is tested with has it
    assert collectives._gloo_on_host()
    monkeypatch.delattr(_jax, "make_gloo_tcp_collectives")
    assert not collectives._gloo_on_host()  # open_collective then sets only the public flag
