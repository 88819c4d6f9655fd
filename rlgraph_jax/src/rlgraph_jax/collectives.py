"""The JAX backend's learner-group collective: ``jax.distributed`` over the learners' processes (gloo between
CPUs), and each compiled API method, in a learner, one SPMD program over a mesh of one device per learner
(``jax.shard_map``) whose optimizers sum their gradients with ``jax.lax.psum``.

``jax.distributed`` must be initialized before a process computes anything, so every learner of a JAX group
runs in a process of its own and joins before it builds its graph (``collective_traits``). In one SPMD
program every learner's inputs have the same shape: a group splits each batch evenly.

Its servers listen on the addresses the group gives: the coordinator on learner 0's address, gloo's sockets
on each learner's own host (JAX's own gloo takes the address this machine's name resolves to: where that is not
the learner's, it is given the learner's through ``jax._src``, see :func:`_cpu_client_on`), NCCL's on the network interface of the
learner's host (``NCCL_SOCKET_IFNAME``, where the user set none): a group on one machine listens on the
loopback interface alone.
"""

from __future__ import annotations

import functools
import inspect
import ipaddress
import os
import socket
from collections.abc import Callable
from typing import Any

import attrs
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from rlgraph.graph.collectives import CollectiveTraits, RowWindow, draw_rows, interface_of, split_address

AXIS = "learners"
INITIALIZATION_SECONDS = 600
"""How long a learner waits for the others to join (they build nothing before)."""


@attrs.define
class JaxGroup:
    """This process's learner of a group: its ``rank`` of ``size``, the ``mesh`` of one device per learner,
    and its own ``device`` of it."""

    rank: int
    size: int
    mesh: Mesh
    device: Any
    #: Inside a group program's trace (where the learner axis is bound), else in an abstract trace that learns
    #: which state a method uses.
    tracing: bool = False

    def program(self, pure: Callable[..., Any]) -> Callable[..., Any]:
        """``pure`` (of local arrays) as one jitted program of the whole group: it takes and gives arrays with
        a leading learner axis, each learner's row its own (:meth:`to_group`, :meth:`to_local`)."""

        def body(*stacked: Any) -> Any:
            self.tracing = True
            try:
                outputs = pure(*jax.tree_util.tree_map(lambda leaf: leaf[0], stacked))
            finally:
                self.tracing = False
            return jax.tree_util.tree_map(lambda leaf: leaf[None], outputs)

        def run(*args: Any) -> Any:
            group = jax.shard_map(
                body, mesh=self.mesh, in_specs=(P(AXIS),) * len(args), out_specs=P(AXIS), check_vma=False
            )
            return group(*args)

        return jax.jit(run)

    def to_group(self, local: Any) -> Any:
        """Local arrays (nested) as the group's: each this learner's row of a leading learner axis."""
        sharding = NamedSharding(self.mesh, P(AXIS))
        rows = _add_learner_axis(local)  # one program for every leaf (not an op each)
        return jax.tree_util.tree_map(
            lambda row: jax.make_array_from_single_device_arrays(
                (self.size, *row.shape[1:]), sharding, [row]
            ),
            rows,
        )

    def to_local(self, stacked: Any) -> Any:
        """This learner's rows of the group's arrays."""
        return _drop_learner_axis(jax.tree_util.tree_map(lambda leaf: leaf.addressable_data(0), stacked))

    def draw_rows(
        self, draw: Callable[..., Any], shape: Any, window: RowWindow, *args: Any, **kwargs: Any
    ) -> Any:
        """The learner's rows of a draw for the whole batch: in a group program, from its traced index."""
        dims = tuple(shape) if isinstance(shape, tuple | list) else (shape,)
        if not self.tracing or not dims or dims[0] != window.rows:
            return draw_rows(draw, shape, window, *args, **kwargs)
        whole = draw((window.total, *dims[1:]), *args, **kwargs)
        start = jax.lax.axis_index(AXIS) * window.rows
        return jax.lax.dynamic_slice_in_dim(whole, start, window.rows, axis=0)


@jax.jit
def _add_learner_axis(tree: Any) -> Any:
    return jax.tree_util.tree_map(lambda leaf: leaf[None], tree)


@jax.jit
def _drop_learner_axis(tree: Any) -> Any:
    return jax.tree_util.tree_map(lambda leaf: leaf[0], tree)


#: The group this process joined (one at most: ``jax.distributed`` is the process's).
GROUP: JaxGroup | None = None


def _gloo_on_host() -> bool:
    """Whether this JAX lets a CPU client's gloo take the address it listens on (private API, probed here at
    import: ``jax._src.xla_bridge.make_cpu_client(collectives=...)`` and ``make_gloo_tcp_collectives(...,
    hostname=...)``, as in jax 0.10). Without it, JAX's own gloo (the ``jax_cpu_collectives_implementation``
    flag) listens on the address this machine's name resolves to."""
    try:
        from jax._src import distributed, xla_bridge
        from jax._src.lib import _jax

        make = _jax.make_gloo_tcp_collectives
        takes = "hostname" in (make.__doc__ or "") and hasattr(distributed.global_state, "client")
        return takes and "collectives" in inspect.signature(xla_bridge.make_cpu_client).parameters
    except (ImportError, AttributeError, TypeError, ValueError):
        return False


#: Whether :func:`_cpu_client_on` can give gloo the learner's address (else JAX's own gloo serves).
GLOO_ON_HOST = _gloo_on_host()


def _own_gloo_listens_on(host: str) -> bool:
    """Whether JAX's own gloo listens on ``host`` already: the address this machine's name resolves to (then
    the private API of :func:`_cpu_client_on` is not needed, and JAX's own path serves as it always has)."""
    own = own_gloo_address()
    try:
        return own is not None and own == socket.gethostbyname(host)
    except OSError:
        return False


def own_gloo_address() -> str | None:
    """The address JAX's own gloo listens on (this machine's name resolved), or None where it does not resolve."""
    try:
        return socket.gethostbyname(socket.gethostname())
    except OSError:
        return None


def open_gloo_reason(gloo_on_host: bool, own_address: str | None) -> str:
    """Why a group's gloo can be reached beyond the learners' addresses ("" where it cannot): this JAX cannot
    give gloo an address (``gloo_on_host`` False), and its own gloo would listen on ``own_address``, which is
    not a loopback address (a group on one machine meets on the loopback interface)."""
    if gloo_on_host or own_address is None or ipaddress.ip_address(own_address).is_loopback:
        return ""
    return (
        f"this JAX's gloo (jax {jax.__version__}: no address can be given to it) listens on {own_address}, the "
        "address this machine's name resolves to, not on the learners' own, so anyone who can reach that "
        "address could join or disturb the group's gradient sums"
    )


def _cpu_client_on(host: str) -> None:
    """Make this process's CPU client (not made yet: a learner joins before it computes) one whose gloo listens
    on ``host`` alone."""
    from jax._src import distributed, xla_bridge
    from jax._src.lib import _jax

    collectives = _jax.make_gloo_tcp_collectives(
        distributed_client=distributed.global_state.client, hostname=host
    )
    factory = functools.partial(xla_bridge.make_cpu_client, collectives=collectives)
    xla_bridge.register_backend_factory("cpu", factory, priority=0, fail_quietly=False)


class JaxCollectives:
    """The learner-group collective's part of the backend."""

    _open = open_gloo_reason(GLOO_ON_HOST, own_gloo_address())
    collective_traits = CollectiveTraits(
        joins_before_build=True,
        even_rows=True,
        listens_on_every_interface=bool(_open),
        open_servers_reason=_open,
    )

    def open_collective(
        self, rank: int, size: int, address: str, addresses: list[str], device: str | None
    ) -> JaxGroup:
        global GROUP
        if GROUP is not None:
            raise RuntimeError("this process has joined a JAX learner group already")
        kind, _, index = (device or "cpu").lower().partition(":")
        platform = "gpu" if kind in ("cuda", "gpu") else "cpu"
        host = split_address(addresses[rank])[0]
        if platform == "cpu":
            jax.config.update("jax_cpu_collectives_implementation", "gloo")
        else:  # a learner takes the memory it uses: the leading process may act on the same GPU
            os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
            interface = interface_of(host)
            if interface is not None:  # (NCCL reads it when it first communicates)
                os.environ.setdefault("NCCL_SOCKET_IFNAME", interface)
        jax.distributed.initialize(
            coordinator_address=address,
            coordinator_bind_address=address,  # (learner 0's service: on the address given, not every interface)
            num_processes=size,
            process_id=rank,
            local_device_ids=[int(index or 0)] if platform == "gpu" else None,
            initialization_timeout=INITIALIZATION_SECONDS,
        )
        if platform == "cpu" and GLOO_ON_HOST and not _own_gloo_listens_on(host):
            _cpu_client_on(host)
        first: dict[int, Any] = {}
        for found in jax.devices(platform):  # the first device of each learner's process, in rank order
            first.setdefault(found.process_index, found)
        mesh = Mesh(np.array([first[process] for process in range(size)]), (AXIS,))
        GROUP = JaxGroup(rank, size, mesh, first[jax.process_index()])
        return GROUP

    def all_reduce_sum(self, group: JaxGroup, values: list[Any]) -> list[Any]:
        if group.tracing:
            return list(jax.lax.psum(list(values), AXIS))
        if not all(
            isinstance(value, jax.core.Tracer) for value in values
        ):  # values: a step outside the program
            raise RuntimeError("a learner group's gradients are summed inside its program only")
        return list(values)  # an abstract trace (shapes only): the sum has the values' shapes

    def close_collective(self, group: JaxGroup) -> None:
        global GROUP
        if GROUP is group:
            GROUP = None
            jax.distributed.shutdown()
