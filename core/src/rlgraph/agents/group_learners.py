"""The learners of a group that run in other processes: each a :class:`GroupLearner` (the learner role of the
group's agent, built in its own process), started by a :class:`LearnerLauncher`: local processes here
(:class:`LocalLearners`), Ray actors with rlgraph-ray. The group itself is :mod:`rlgraph.agents.learner_group`'s.
"""

from __future__ import annotations

import contextlib
import copy
import multiprocessing
import multiprocessing.connection
import os
import signal
import socket
import traceback
from collections.abc import Sequence
from typing import Any, Protocol

import attrs
import numpy as np

from rlgraph.agents.roles import Role
from rlgraph.errors import LearnerFailedError, LearnerGroupError
from rlgraph.graph.collectives import RowWindow

READY_SECONDS = 600.0
"""How long a new learner may take to import its backend and build its graph (and a round to answer)."""
LOOPBACK = "127.0.0.1"
"""Where the learners of a group on one machine meet: their collective's servers listen on it alone."""


def run_rows(graph: Any, share: Any, api_method: str, args: list[Any], window: RowWindow | None) -> Any:
    """``api_method`` on a learner's ``window`` of rows (None: an every-learner call)."""
    share.window, share.calling = window, True
    try:
        return graph.execute(api_method, *args, checked=True)
    finally:
        share.window, share.calling = None, False


def free_port(host: str = LOOPBACK) -> int:
    """A TCP port free on ``host`` (an address of this machine) now."""
    with contextlib.closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


class LearnerLauncher(Protocol):
    """What a plugin of the ``rlgraph.learner_launchers`` entry-point group gives: where a group's learners
    run. Each learner it launches answers :meth:`send` (a :class:`GroupLearner` method's name and arguments)
    with :meth:`receive` (its result, or a LearnerGroupError), and has ``rank``, ``alive``, ``exit_code``,
    ``leave()``, ``close()`` and a static ``wait(learners, timeout)`` (those whose answers have come), as
    :class:`LocalLearner` does. Its ``where`` says where each learner it launches runs (``"a local
    process"``), as a run's summary names it."""

    where: str

    @staticmethod
    def applies() -> bool:
        """Whether this launcher serves the process (rlgraph-ray's: where it uses Ray)."""

    def address(self) -> str:
        """Where learner 0 meets the others, where it is this process (``host:port``)."""

    def launch(
        self,
        agent_class: type,
        config: Any,
        ranks: Sequence[int],
        size: int,
        devices: list[Any],
        num_cpus: float = 1.0,
    ) -> list[Any]:
        """Learners ``ranks`` of a group of ``size``, each on its device of ``devices`` (else with
        ``num_cpus`` CPUs, where the launcher reserves them), not built yet."""

    def close(self) -> None:
        """Release what :meth:`launch` took (after the learners are closed)."""


def learner_launcher() -> LearnerLauncher:
    """Where a group's other learners run: the first launcher of the ``rlgraph.learner_launchers`` entry-point
    group that applies here (rlgraph-ray's: where this process uses Ray), else local processes."""
    from rlgraph import plugins

    for name in plugins.names("rlgraph.learner_launchers"):
        launcher_class = plugins.load("rlgraph.learner_launchers", name)
        if launcher_class.applies():
            return launcher_class()
    return LocalLearners()


# -- the other learners ---------------------------------------------------------------------------


class GroupLearner:
    """Learner ``rank`` of a group, in a process of its own: the learner role of ``agent_class`` built from
    ``config``. A plain class: :class:`LocalLearner` runs it in a local process, rlgraph-ray as a Ray actor.
    The group asks it for its :meth:`endpoint`, then has it :meth:`build` (joining the collective first where
    the backend's must be set up before a graph is built, else after, through :meth:`join`)."""

    def __init__(
        self,
        agent_class: type,
        config: Any,
        rank: int,
        size: int,
        device: str | None,
        host: str = LOOPBACK,
    ) -> None:
        self.agent_class, self.config = agent_class, config
        self.rank, self.size, self.device, self.host = rank, size, device, host
        self.addresses: list[str] = []
        self.handle: Any = None
        self.share: Any = None
        self.graph: Any = None

    def endpoint(self) -> str:
        """Where this learner can be reached (``host:port``, the port free here now)."""
        return f"{self.host}:{free_port(self.host)}"

    def build(self, addresses: list[str]) -> list[str]:
        """Build the learner's graph (after joining the collective where it must come first); the names of
        its variables."""
        from rlgraph.graph.backend import load_backend

        self.addresses = list(addresses)
        backend = load_backend(self.config.backend)
        if backend.collective_traits.joins_before_build:
            from rlgraph.agents.specs import ExecutionSpec

            # Joining starts the backend: its process-wide thread pools are the spec's from here.
            execution = self.config.execution_spec or ExecutionSpec()
            backend.configure_threads(
                intra_op=execution.intra_op_threads, inter_op=execution.inter_op_threads
            )
            self.handle = backend.join_collective(self.rank, self.size, self.addresses, self.device)
        agent = self.agent_class(learner_config(self.config, self.device))
        self.graph = agent._built_graph()
        if self.handle is not None:
            self.join()
        return sorted(self.graph.variables())

    def join(self) -> None:
        """Join the group's collective (it returns once every learner has)."""
        backend = self.graph.backend
        self.share = backend.join_learner_group(
            self.graph.ops, self.rank, self.size, self.addresses, self.device, handle=self.handle
        )

    def set_state(self, state: dict[str, np.ndarray]) -> None:
        self.graph.set_weights(state)

    def get_state(self) -> dict[str, np.ndarray]:
        return self.graph.get_weights()

    def call(
        self,
        api_method: str,
        args: list[Any],
        window: RowWindow | None,
        random_state: Any,
        given: dict[str, np.ndarray] | None = None,
        report: bool = False,
    ) -> Any:
        """Run ``api_method`` on this learner's rows (``window``), drawing from the group's ``random_state``,
        after taking the variables ``given`` (changed by the group's leader since they last agreed). With
        ``report``: ``(outputs, the variables the call changed, the random state after it)``."""
        if given:
            write_some(self.graph, given)
        if random_state is not None:
            self.graph.ops.set_random_state(random_state)
        before = self.graph.get_weights() if report else None
        outputs = run_rows(self.graph, self.share, api_method, args, window)
        if before is None:
            return outputs
        changed = changed_values(before, self.graph.get_weights())
        ops = self.graph.ops
        return outputs, changed, ops.random_state()

    def leave(self) -> None:
        if self.share is not None:
            self.graph.backend.leave_learner_group(self.graph.ops)
            self.share = None

    def process_id(self) -> int:
        return os.getpid()


def changed_values(before: dict[str, np.ndarray], after: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The entries of ``after`` whose values differ from ``before``'s."""
    return {
        name: value
        for name, value in after.items()
        if name not in before or not np.array_equal(value, before[name], equal_nan=value.dtype.kind in "fc")
    }


def write_some(graph: Any, values: dict[str, np.ndarray]) -> None:
    """``values`` into their variables of ``graph``; the rest keep theirs."""
    graph.set_weights(values, may_miss=frozenset(graph.variables()))


def learner_config(config: Any, device: str | None) -> Any:
    """``config`` for the learner role, its graph on ``device`` where one is given (each learner its own)."""
    config = attrs.evolve(config, role=Role.LEARNER.value)
    if device is None:
        return config
    from rlgraph.agents.specs import ExecutionSpec

    execution = copy.deepcopy(config.execution_spec) if config.execution_spec is not None else ExecutionSpec()
    execution.device_map = {"": device}  # (evolve would give its removed keys again, and be refused)
    return attrs.evolve(config, execution_spec=execution)


def learner_processes(preload: Sequence[str]) -> Any:
    """How a group's local learners start: as children of a fork server, a fresh interpreter that imported
    ``preload`` (the backend's and the agent's modules) once, so that each learner starts in a fraction of a
    second where importing a framework takes seconds; spawned (fresh interpreters) where the platform has no
    fork server. The fork server starts with the first group, and its imports are that group's."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([__name__, *preload])
    return context


class LocalLearners:
    """Launches a group's other learners as processes on this machine (fresh interpreters, forked from a
    server that imported the backend: :func:`learner_processes`): the :class:`LearnerLauncher` where no other
    applies."""

    where = "a local process"

    @staticmethod
    def applies() -> bool:
        return True

    def address(self) -> str:
        """Where learner 0 meets the others (``host:port``)."""
        return f"{LOOPBACK}:{free_port()}"

    def launch(
        self,
        agent_class: type,
        config: Any,
        ranks: Sequence[int],
        size: int,
        devices: list[Any],
        num_cpus: float = 1.0,
    ) -> list[Any]:
        # (Local processes reserve no CPUs: ``num_cpus`` is for a launcher that places them.)
        from rlgraph.graph.backend import load_backend

        backend = type(load_backend(config.backend)).__module__
        context = learner_processes([backend, agent_class.__module__])
        return [LocalLearner(context, agent_class, config, rank, size, devices[rank]) for rank in ranks]

    def close(self) -> None:
        pass


class LocalLearner:
    """Learner ``rank`` of a group (a :class:`GroupLearner`) in a local process, talked to through a pipe:
    :meth:`send` a command (a method of :class:`GroupLearner` and its arguments), :meth:`receive` the answer."""

    def __init__(
        self, context: Any, agent_class: type, config: Any, rank: int, size: int, device: str | None
    ) -> None:
        self._connection, theirs = context.Pipe()
        self.process = context.Process(
            target=run_learner,
            args=(theirs, agent_class, config, rank, size, device),
            name=f"rlgraph-learner-{rank}",
            daemon=True,
        )
        self.process.start()
        theirs.close()
        self.rank = rank
        self._leaving = False

    @staticmethod
    def wait(learners: Sequence[LocalLearner], timeout: float) -> list[LocalLearner]:
        """Those of ``learners`` whose answer (or end) has come, once one has (none after ``timeout``)."""
        ready = multiprocessing.connection.wait([learner._connection for learner in learners], timeout)
        return [learner for learner in learners if learner._connection in ready]

    @property
    def alive(self) -> bool:
        return self.process.is_alive()

    @property
    def exit_code(self) -> int | None:
        return self.process.exitcode

    def send(self, command: str, *args: Any) -> None:
        try:
            self._connection.send((command, args))
        except (BrokenPipeError, ConnectionError, OSError) as error:
            raise self._died(error) from error

    def receive(self, timeout: float | None = READY_SECONDS) -> Any:
        """The answer to the last command: its value, or the learner's error raised here."""
        try:
            if not self._connection.poll(timeout):
                raise LearnerGroupError(f"learner {self.rank} did not answer within {timeout:.0f} s")
            status, value = self._connection.recv()
        except (EOFError, ConnectionError, OSError) as error:
            raise self._died(error) from error
        if status == "error":
            raise LearnerFailedError(f"learner {self.rank} failed: {value}")
        return value

    def _died(self, error: BaseException) -> LearnerGroupError:
        self.process.join(timeout=5)
        return LearnerGroupError(f"learner {self.rank} died (exit code {self.process.exitcode}): {error!r}")

    def leave(self) -> None:
        """Ask the learner to leave the group and end (:meth:`close` waits for it)."""
        if not self._leaving:
            self._leaving = True
            self._connection.send(("leave", ()))

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.leave()
        self.process.join(timeout=10)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        self._connection.close()


def run_learner(
    connection: Any, agent_class: type, config: Any, rank: int, size: int, device: str | None
) -> None:
    """A local learner process's life: run the group's commands (:class:`GroupLearner`'s methods) until
    ``leave``. It ignores SIGINT: Ctrl-C in a terminal stops the run through the group's leader."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    learner = GroupLearner(agent_class, config, rank, size, device)
    while True:
        command, args = connection.recv()
        try:
            connection.send(("ok", getattr(learner, command)(*args)))
        except BaseException:  # noqa: BLE001 - the group raises it, with this traceback
            connection.send(("error", traceback.format_exc(limit=8)))
        if command == "leave":
            return
