"""The JAX collective's gloo takes the learner's address through a private API of jax (``jax._src``): probed at
import, with JAX's own gloo (on the address this machine's name resolves to) where the probe fails."""

from __future__ import annotations

import socket

import pytest

pytest.importorskip("jax")


def test_the_private_gloo_api_is_probed_and_missing_it_falls_back_to_jaxs_own_gloo(monkeypatch):
    from jax._src.lib import _jax

    from rlgraph_jax import collectives

    assert collectives.GLOO_ON_HOST  # the jax this project is tested with has it
    assert collectives._gloo_on_host()
    monkeypatch.delattr(_jax, "make_gloo_tcp_collectives")
    assert not collectives._gloo_on_host()  # open_collective then sets only the public flag


def test_a_group_whose_gloo_would_listen_beyond_loopback_is_refused_unless_allowed():
    """Without the private API, JAX's own gloo listens on the address the machine's name resolves to: where
    that is not a loopback address, the trait says why and a group is refused before any learner starts."""
    from rlgraph.agents.group_rows import open_servers_refused
    from rlgraph_jax import collectives

    assert collectives.open_gloo_reason(True, "10.1.2.3") == ""  # gloo takes the learner's address
    assert collectives.open_gloo_reason(False, "127.0.1.1") == ""  # (Debian's name for the machine)
    assert collectives.open_gloo_reason(False, None) == ""
    reason = collectives.open_gloo_reason(False, "10.1.2.3")
    assert "listens on 10.1.2.3" in reason
    refused = open_servers_refused(2, "jax", reason)
    assert "listens on 10.1.2.3" in refused and "allow_open_learner_servers: true" in refused
    traits = collectives.JaxCollectives.collective_traits  # on this machine: gloo on the address given
    assert not traits.listens_on_every_interface and traits.open_servers_reason == ""


def test_a_machine_whose_name_does_not_resolve_has_no_own_gloo_address(monkeypatch):
    """Where this machine's name does not resolve, JAX's own gloo has no address to listen on: none is
    reported (no open-server reason) and no host is taken for it."""
    from rlgraph_jax import collectives

    def unresolved(_name):
        raise socket.gaierror(-2, "Name or service not known")

    monkeypatch.setattr(collectives.socket, "gethostbyname", unresolved)
    assert collectives.own_gloo_address() is None
    assert not collectives._own_gloo_listens_on("127.0.0.1")
    assert collectives.open_gloo_reason(False, collectives.own_gloo_address()) == ""


def test_a_process_joins_one_group_and_sums_gradients_inside_its_program_only(monkeypatch):
    """A second join is refused before JAX's distributed service is touched; a sum of concrete values (a
    step outside the group's program) is an error, not a silent local gradient."""
    import jax.numpy as jnp

    from rlgraph_jax import collectives

    monkeypatch.setattr(collectives, "GROUP", object())
    with pytest.raises(RuntimeError, match="joined a JAX learner group already"):
        collectives.JaxCollectives().open_collective(
            0, 2, "127.0.0.1:1", ["127.0.0.1:1", "127.0.0.1:2"], None
        )
    group = collectives.JaxGroup(0, 2, mesh=None, device=None)
    with pytest.raises(RuntimeError, match="summed inside its program only"):
        collectives.JaxCollectives().all_reduce_sum(group, [jnp.ones(2)])
