"""Ray for RLgraph's executors: an embedded cluster on this machine by default, or one joined by address."""

from __future__ import annotations

import logging
import math
import os
import socket
import time
from typing import Any

import ray

from rlgraph.errors import RLGraphError, SpecError

ADDRESS_VARIABLE = "RLGRAPH_RAY_ADDRESS"
"""The environment variable naming a Ray cluster to join (``host:port`` of its head, or ``ray://host:port``)."""
TOKEN_NOTICE_LOGGER = "ray._private.authentication.authentication_token_setup"
"""The logger of Ray's notice that a new local cluster has token authentication on."""
AUTH_MODE_VARIABLE = "RAY_AUTH_MODE"
"""Ray's variable for a driver's authentication mode (``token``, ``disabled``)."""
CONNECT_TIMEOUT = 15.0
"""Seconds to wait for a cluster named by address before giving up."""
START_TIMEOUT = 180.0
"""Seconds to wait for actors (workers, replay shards) to start and build."""


class ClusterError(RLGraphError):
    """Ray could not be started or joined, or cannot host what an executor asks of it."""


#: The GCS address of the embedded cluster :func:`connect` started in this process (None: none started).
_started: str | None = None


def started_here() -> bool:
    """Whether this process's Ray is the embedded cluster :func:`connect` started: one node, this machine's,
    RLgraph's alone (its CPUs are fitted to what a run asks: :func:`cpus_for`)."""
    return _started is not None and ray.is_initialized() and ray.get_runtime_context().gcs_address == _started


def cpus_for(count: int, wanted: float, available: float) -> float:
    """The CPUs each of ``count`` actors reserves on a cluster RLgraph started: ``wanted`` where they fit in
    ``available``, else an equal share of it (0 where none is left). Ray's CPUs are logical: they only order
    its scheduling, and actors that share a core run all the same."""
    share = max(float(available), 0.0) / count
    return float(wanted) if wanted <= share else math.floor(share * 1e4) / 1e4  # (Ray's grain: 1e-4)


def connect(address: str | None = None, timeout: float = CONNECT_TIMEOUT) -> dict[str, float]:
    """Make sure Ray runs for this process; the cluster's resources (``{"CPU": 2.0, ...}``).

    Ray already initialized in this process is used as it is (an address given must still answer). Otherwise ``address`` (or
    ``$RLGRAPH_RAY_ADDRESS``) names a cluster to join; without one, an embedded cluster starts on this
    machine with its CPUs and GPUs and stops with the process. An address that does not answer within
    ``timeout`` seconds is a :class:`ClusterError` naming it.
    """
    address = address or os.environ.get(ADDRESS_VARIABLE) or None
    if address is not None:
        _check_reachable(address, timeout)
    if ray.is_initialized():
        return ray.cluster_resources()
    options: dict[str, Any] = {"include_dashboard": False, "logging_level": "WARNING", "log_to_driver": True}
    if address is None:
        # Ray 2.60 warns that it turned its default, token authentication, on: no news for a cluster of
        # this process's own (the warning's logger; any other warning still shows).
        logging.getLogger(TOKEN_NOTICE_LOGGER).setLevel(logging.ERROR)
        # "local": a new cluster of this process's own, even where RAY_ADDRESS names another.
        ray.init(address="local", num_cpus=os.cpu_count(), **options)
        global _started
        _started = ray.get_runtime_context().gcs_address
    else:
        given_mode = os.environ.get(AUTH_MODE_VARIABLE)  # the user's, before this process may set it
        _send_token_where_one_exists()
        start = time.monotonic()
        try:
            ray.init(address=address, **options)
        except (ConnectionError, RuntimeError, TimeoutError) as error:
            raise ClusterError(
                f"cannot join the Ray cluster at {address!r}: Ray gave up after "
                f"{time.monotonic() - start:.1f} s ({error}). {_authentication_hint(given_mode)}"
            ) from error
    return ray.cluster_resources()


def _authentication_hint(given_mode: str | None) -> str:
    """What this process sent to authenticate, and what to set where the cluster refused it for that (Ray's
    error does not say why it gave up; a cluster with token authentication refuses a driver without its token)."""
    fix = (
        "copy the head's token (its ~/.ray/auth_token, or `ray get-auth-token` there) into ~/.ray/auth_token "
        "here or into RAY_AUTH_TOKEN"
    )
    if os.environ.get(AUTH_MODE_VARIABLE, "").lower() == "token":
        how = "as RAY_AUTH_MODE=token says" if given_mode is not None else "as one was found"
        return (
            f"This process sent an authentication token ({how}), from {_token_source()}: if the cluster "
            f"refused it, it is not the cluster's token: {fix}."
        )
    if given_mode is not None:
        return (
            f"This process sent no authentication token, as {AUTH_MODE_VARIABLE}={given_mode} says: if the "
            "cluster uses token authentication (`ray start`'s default under Ray 2.60 where a token exists), "
            f"unset {AUTH_MODE_VARIABLE} or set {AUTH_MODE_VARIABLE}=token, and {fix}."
        )
    return (
        "This process sent no authentication token (none in RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH or "
        f"~/.ray/auth_token): if the cluster uses token authentication, {fix}."
    )


def _token_source() -> str:
    """Where Ray reads this process's token from (its own order of lookup)."""
    if os.environ.get("RAY_AUTH_TOKEN"):
        return "$RAY_AUTH_TOKEN"
    if os.environ.get("RAY_AUTH_TOKEN_PATH"):
        return f"$RAY_AUTH_TOKEN_PATH ({os.environ['RAY_AUTH_TOKEN_PATH']})"
    return "~/.ray/auth_token"


def _send_token_where_one_exists() -> None:
    """Authenticate to a cluster joined by address as ``ray start`` set it up. Ray 2.60 starts clusters with
    token authentication by default and saves the token (``~/.ray/auth_token``), but a driver given an address
    sends it only under ``RAY_AUTH_MODE=token``: where that variable is unset and a token exists (Ray's own
    lookup: ``RAY_AUTH_TOKEN``, ``RAY_AUTH_TOKEN_PATH``, the default file), token mode is turned on for this
    process, as Ray does itself for a cluster it finds without an address. ``RAY_AUTH_MODE`` set either way
    is left as it is."""
    try:
        from ray._private.authentication.authentication_token_setup import (
            maybe_enable_token_auth_if_token_available,
        )
    except ImportError:  # a Ray without token authentication
        return
    notices = logging.getLogger(TOKEN_NOTICE_LOGGER)
    level = notices.level
    notices.setLevel(logging.ERROR)  # its notice that token mode is on: the reason this is called
    try:
        maybe_enable_token_auth_if_token_available(warn_if_disabled=False)
    finally:
        notices.setLevel(level)


def _check_reachable(address: str, timeout: float) -> None:
    """A ClusterError unless something listens at ``address``'s host and port (``auto``: Ray looks)."""
    if address == "auto":
        return
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise SpecError(
            f"a Ray cluster address is host:port (or ray://host:port, or auto), got {address!r}",
            "ray_address",
        )
    start = time.monotonic()
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as error:
        happened = _connection_failure(error, host, time.monotonic() - start, timeout)
        raise ClusterError(
            f"no Ray cluster answers at {address!r}: {happened}; start one there (ray start --head) or leave "
            f"ray_address and ${ADDRESS_VARIABLE} unset to run on this machine"
        ) from None


def _connection_failure(error: OSError, host: str, seconds: float, timeout: float) -> str:
    """What happened to a connection that failed after ``seconds`` (of a ``timeout``)."""
    if isinstance(error, ConnectionRefusedError):
        return f"the connection was refused after {seconds:.3g} s (nothing listens on that port)"
    if isinstance(error, TimeoutError):
        return f"no answer within {timeout:g} s"
    if isinstance(error, socket.gaierror):
        return f"host name {host!r} does not resolve ({error.strerror})"
    return f"{error.strerror or error} after {seconds:.3g} s"


def worker_cpus(resources: dict[str, float], num_workers: int, cpus_per_worker: float) -> float:
    """The CPUs each worker reserves: ``cpus_per_worker``, or on a cluster RLgraph started, their share of its
    CPUs where they do not fit (:func:`cpus_for`); a joined cluster too small is refused (:func:`check_capacity`)."""
    if started_here():
        return cpus_for(num_workers, cpus_per_worker, resources.get("CPU", 0.0))
    check_capacity(resources, num_workers, cpus_per_worker)
    return cpus_per_worker


def check_capacity(resources: dict[str, float], num_workers: int, cpus_per_worker: float) -> None:
    """A SpecError naming ``num_workers`` where the cluster has too few CPUs to host the workers."""
    needed = num_workers * cpus_per_worker
    available = float(resources.get("CPU", 0.0))
    if needed > available:
        raise SpecError(
            f"{num_workers} workers of {cpus_per_worker:g} CPUs each need {needed:g} CPUs, but the Ray cluster "
            f"has {available:g}: use fewer workers, or a lower num_cpus_per_worker (workers then share CPUs)",
            "num_workers",
        )


def wait_ready(actors: list[Any], what: str, timeout: float = START_TIMEOUT) -> None:
    """Wait until every actor answers ``ready()``; a ClusterError saying why where they fail to build or
    do not start within ``timeout`` seconds (Ray could not start their processes)."""
    try:
        ray.get([actor.ready.remote() for actor in actors], timeout=timeout)
    except ray.exceptions.GetTimeoutError:
        raise ClusterError(
            f"the {what} did not start within {timeout:g} s: Ray could not start their processes (its logs: "
            "the session folder under $RAY_TMPDIR, else $TMPDIR, else /tmp, in ray/session_latest/logs)"
        ) from None
    except (ray.exceptions.RayActorError, ray.exceptions.RayTaskError) as error:
        raise ClusterError(f"the {what} failed to start: {last_line(error)}") from error


def last_line(error: BaseException) -> str:
    """The last line of a Ray error's text: the error raised in the actor or task, after its traceback."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[-1] if lines else type(error).__name__
