"""A learner's place in a learner group, inside its graph: gradients summed over the group (each learner's
weighted by its share of the batch's rows) before every optimizer step, and the random draws of a call taken
as the whole batch's rows would take them.

The group itself (its processes, the batches it splits) is :mod:`rlgraph.agents.learner_group`'s; a backend
gives the collective through its ``open_collective`` and ``all_reduce_sum`` methods, and says what it needs of
the group through ``collective_traits`` (see :class:`rlgraph.graph.backend.Backend`).
"""

from __future__ import annotations

import ipaddress
import socket
import struct
from collections.abc import Callable
from typing import Any

import attrs

#: The random ops that take a shape first: in a split call, a draw whose leading axis is the learner's rows
#: is drawn for the whole batch and sliced (a learner's noise is the rows' noise one learner would draw).
WINDOWED_RANDOM_OPS = ("random_uniform", "random_normal", "random_int", "random_bernoulli")


@attrs.frozen
class CollectiveTraits:
    """What a backend's collective asks of a learner group (its ``collective_traits``)."""

    #: The collective must be set up before the process builds anything (``jax.distributed``, TensorFlow's
    #: collective ops): every learner then runs in a process of its own, learner 0 too, and the process that
    #: leads the group keeps its graph in their state (:mod:`rlgraph.agents.learner_group`).
    joins_before_build: bool = False
    #: Every learner takes as many rows of a batch (one SPMD program over the group: ``shard_map``).
    even_rows: bool = False
    #: Its servers can be reached beyond the addresses they are given: they listen on every network interface
    #: of a learner's machine (TensorFlow's gRPC servers, which run what any client that reaches them sends),
    #: or on an address of the machine's own choosing: a group refuses them unless told to allow them
    #: (``allow_open_servers``). A backend whose collective binds the addresses it is given (each learner's
    #: own host, learner 0's for the server where the group meets) says False.
    listens_on_every_interface: bool = False
    #: Where it says True: which servers listen where, and what a client that reaches them could do (the
    #: refusal says so).
    open_servers_reason: str = ""


@attrs.frozen
class RowWindow:
    """One learner's rows of a split call: ``rows`` from ``offset`` of a batch of ``total``; ``shares``, every
    learner's rows (how the call is split over the group)."""

    offset: int
    rows: int
    total: int
    shares: tuple[int, ...] = ()

    @property
    def weight(self) -> float:
        """The learner's share of the batch: its gradients' weight in the group's sum."""
        return self.rows / self.total


@attrs.define
class LearnerShare:
    """This process's learner in a group: its ``rank`` of ``size``, the backend's group ``handle``, and the
    rows of the split call under way (None outside one: an every-learner call weighs each learner 1/size)."""

    rank: int
    size: int
    handle: Any
    window: RowWindow | None = None
    #: Inside a call the group runs (split or on every learner): the other learners run it too.
    calling: bool = False

    @property
    def weight(self) -> float:
        return self.window.weight if self.window is not None else 1.0 / self.size


def join_graph(ops: Any, share: LearnerShare) -> None:
    """Make the graph of ``ops`` learner ``share.rank`` of its group: its optimizers sum over the group
    (``ops.learner_share``), and its shape-first random draws draw the whole batch's rows and keep the
    learner's own while ``share`` has a window (see :data:`WINDOWED_RANDOM_OPS`)."""
    ops.learner_share = share
    if hasattr(share.handle, "share"):  # a handle that follows the rows of the call under way
        share.handle.share = share
    # The backend's own draws, kept once: a graph that joins again is not wrapped twice.
    originals = ops.__dict__.setdefault("_unwindowed_random_ops", {})
    for name in WINDOWED_RANDOM_OPS:
        draw = originals.setdefault(name, getattr(ops, name, None))
        if callable(draw):
            setattr(ops, name, _windowed(draw, share))


def _windowed(draw: Callable[..., Any], share: LearnerShare) -> Callable[..., Any]:
    def windowed(shape: Any, *args: Any, **kwargs: Any) -> Any:
        window = share.window
        if window is None or window.rows == window.total:
            return draw(shape, *args, **kwargs)
        # A handle whose programs know the rows only when they run (a traced shape) draws them its own way.
        rows_of = getattr(share.handle, "draw_rows", draw_rows)
        return rows_of(draw, shape, window, *args, **kwargs)

    return windowed


def draw_rows(draw: Callable[..., Any], shape: Any, window: RowWindow, *args: Any, **kwargs: Any) -> Any:
    """``draw(shape)``, and where its leading axis is the learner's rows, the learner's rows of the draw for
    the whole batch (shapes of Python ints)."""
    dims = tuple(shape) if isinstance(shape, tuple | list) or hasattr(shape, "__len__") else (shape,)
    if not dims or dims[0] != window.rows:
        return draw(shape, *args, **kwargs)
    whole = draw((window.total, *dims[1:]), *args, **kwargs)
    return whole[window.offset : window.offset + window.rows]


# -- the network a collective binds ------------------------------------------------------------------


def split_address(address: str) -> tuple[str, int]:
    """``host:port`` (``[::1]:port`` for IPv6) as ``(host, port)``."""
    host, _, port = address.rpartition(":")
    return host.strip("[]"), int(port)


def interface_of(host: str) -> str | None:
    """The name of this machine's network interface that holds ``host`` (an address, or a name of one): the
    loopback interface for a loopback address. None where none does, or where the system does not say
    (interfaces' IPv4 addresses are read on Linux)."""
    try:
        address = ipaddress.ip_address(socket.gethostbyname(host))
        interfaces = socket.if_nameindex()
    except (OSError, ValueError):
        return None
    for _, name in interfaces:
        if address.is_loopback and name.startswith("lo"):  # lo (Linux), lo0 (macOS, BSD)
            return name
        if _ipv4_of(name) == address:
            return name
    return None


def _ipv4_of(interface: str) -> ipaddress.IPv4Address | None:
    """The IPv4 address of ``interface`` (Linux: ioctl SIOCGIFADDR); None where it has none, or elsewhere."""
    try:
        import fcntl
    except ImportError:  # (Windows)
        return None
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            request = struct.pack("256s", interface.encode()[:15])
            answer = fcntl.ioctl(probe.fileno(), 0x8915, request)  # SIOCGIFADDR
        except OSError:
            return None
    return ipaddress.IPv4Address(answer[20:24])
