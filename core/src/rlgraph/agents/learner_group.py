"""Learner groups: N copies of an agent's learner that learn as one, each from 1/N of every batch.

The group starts learners (:class:`LocalLearner` processes here; Ray actors with rlgraph-ray), each the learner
role (:mod:`rlgraph.agents.roles`) of the agent in this process, in its state. On torch the agent here is
learner 0 and N - 1 more start. Where the backend's collective must be joined before a process builds
anything (:class:`~rlgraph.graph.collectives.CollectiveTraits`: TensorFlow's, JAX's), all N start, learner 0
too, and the agent here keeps its graph in learner 0's state (:class:`StateMirror`). Then the agent's API
calls are routed:

- a method that steps an optimizer (its build saw it step one) runs on every learner, each on its
  rows of the batch's batch-ranked inputs. Before every optimizer step the backend sums the learners'
  gradients, each weighted by its share of the rows (:meth:`~rlgraph.graph.backend.Backend.sum_over_learners`):
  where a loss is a mean over rows, that is the whole batch's gradient, so every learner takes the step one
  learner would take on the whole batch, and their weights and optimizer states stay identical. Random
  draws in such a call are the whole batch's rows (:mod:`rlgraph.graph.collectives`), from learner 0's
  streams. Outputs with a batch rank (TD errors: new priorities) come back joined in row order (learner by
  learner, where an algorithm splits a call its own way: :meth:`~rlgraph.agents.agent.Agent.split_for_learners`),
  scalars (the loss, metrics) as the rows' weighted mean, anything else as learner 0 gave it;
- a method declared ``@rlgraph.api(every_learner=True)`` (a target network's sync) runs on every learner
  with the same inputs;
- every other method (acting, memories, advantage estimates) runs on the agent here alone.

An agent that samples its batches inside its graph (a replay memory) samples them on learner 0 in a group
(``sample_batch``), learns from them as from a batch given from outside, and gives its memory the new
priorities (``update_priorities``).
"""

from __future__ import annotations

import contextlib
import itertools
import time
from collections.abc import Sequence
from typing import Any

import attrs
import numpy as np

from rlgraph.agents.group_learners import (
    READY_SECONDS,
    changed_values,
    learner_launcher,
    run_rows,
    write_some,
)
from rlgraph.agents.group_rows import (
    EVERY,
    leaf_axes,
    merge_outputs,
    open_servers_refused,
    refuse_uneven_rows,
    refuse_unsplittable,
    routes_of,
    window_rows,
)
from rlgraph.agents.roles import Role
from rlgraph.errors import APICallError, LearnerFailedError, LearnerGroupError, SpecError
from rlgraph.graph.collectives import RowWindow
from rlgraph.utils import nested

__all__ = ["LearnerFailedError", "LearnerGroup", "LearnerGroupError", "StateMirror"]

FAILURE_SECONDS = 5.0
"""How long the others are asked why, once a round failed on learner 0."""
DYING_SECONDS = 2.0
"""How long a failed round waits to see a learner dead: a collective fails in the survivors as soon as a dying
learner's connections close, a moment before its process has ended (a survivor's own report of the failed
collective may come first). A learner that fails on its own lives on, so its reason comes 2 s later."""


class LearnerGroup:
    """``num_learners`` learners of ``agent``'s learner role, learning as one (see the module): ``agent`` is
    learner 0, or, where the backend's collective is joined before a process builds (tf, jax), follows learner
    0's state.

    Args:
        agent: A built agent whose role learns, on a backend with collectives (``join_learner_group``).
        num_learners: Learners in all (at least 2).
        device_of: The device of learner ``rank`` (None: the agent's own placement).
        num_cpus: The CPUs a launcher that reserves them (Ray's) reserves for each learner it places.
        allow_open_servers: Run a backend whose collective's servers listen on every network interface
            (TensorFlow's gRPC servers: anyone who reaches one can run code in the learner); refused without it.
    """

    def __init__(
        self,
        agent: Any,
        num_learners: int,
        device_of: Any = None,
        num_cpus: float = 1.0,
        allow_open_servers: bool = False,
    ) -> None:
        if isinstance(num_learners, bool) or not isinstance(num_learners, int) or num_learners < 2:
            raise SpecError(
                f"a learner group has an int >= 2 of learners, got {num_learners!r}", "num_learners"
            )
        if not agent.role.includes(Role.LEARNER):
            raise APICallError(
                f"a learner group needs an agent that learns; {agent.name!r} is a {agent.role}"
            )
        graph = agent._built_graph()
        backend = graph.backend
        if not backend.has_collectives:
            raise SpecError(
                f"{num_learners} learners: backend {backend.name!r} has no collectives for a learner group "
                "(Backend.open_collective): train with one learner, or on a backend that has them",
                "num_learners",
            )
        refuse_unsplittable(agent, graph)
        refuse_uneven_rows(agent, num_learners)
        self.agent, self.graph, self.size = agent, graph, num_learners
        device_of = device_of or (lambda rank: None)
        self.devices = devices = [device_of(rank) for rank in range(num_learners)]
        gpus = [str(device) for device in devices if str(device).startswith(("cuda", "gpu"))]
        if len(set(gpus)) < len(gpus):  # NCCL refuses two ranks on one GPU ("Duplicate GPU detected")
            raise SpecError(
                f"{num_learners} learners on {gpus}: each learner on a GPU needs one of its own",
                "num_learners",
            )
        self.traits = backend.collective_traits
        if self.traits.listens_on_every_interface and not allow_open_servers:
            raise SpecError(
                open_servers_refused(num_learners, backend.name, self.traits.open_servers_reason),
                "num_learners",
            )
        #: Whether learner 0 runs in a process of its own (a collective joined before building: this process's
        #: graph is then kept in its state by the mirror), else it is this agent.
        self.remote_zero = self.traits.joins_before_build
        self.launcher = learner_launcher()
        self.learners: list[Any] = []
        self.share: Any = None
        self.mirror: StateMirror | None = None
        try:
            first = 0 if self.remote_zero else 1
            self.learners = self.launcher.launch(
                type(agent), agent.config, range(first, num_learners), num_learners, devices, num_cpus
            )
            addresses = self._round("endpoint", [()] * len(self.learners))
            if not self.remote_zero:
                addresses.insert(0, self.launcher.address())  # learner 0 (here) is where they meet
            # Each learner answers once built (a failed build says why here); it joined the collective first
            # where the backend's must come first, else it joins below, as learner 0 here does.
            names = self._round("build", [(addresses,)] * len(self.learners))
            self._names = sorted(set().union(*names))
            missing = sorted(set(self._names) - set(graph.variables()))
            if missing:  # (a learner's role holds no variable the whole agent's lacks)
                raise LearnerGroupError(f"the learners hold variables this agent lacks: {missing}")
            if self.remote_zero:
                self.mirror = StateMirror(graph, self._names)
            else:  # learner 0 joins here as the others join there

                def join() -> Any:
                    return backend.join_learner_group(graph.ops, 0, num_learners, addresses, devices[0])

                self.share = self._round("join", [()] * len(self.learners), join)[0]
            self.routes = routes_of(graph)
            self.sync()
        except BaseException:
            self.close()
            raise
        agent.learner_group = self

    def describe(self) -> list[dict[str, Any]]:
        """Each learner's ``rank``, where it runs (``"this process"``, ``"a local process"``, ``"a Ray actor"``)
        and its ``device`` (``"default"``: the backend's own placement, as for one learner)."""
        elsewhere = getattr(self.launcher, "where", type(self.launcher).__name__)
        here = None if self.remote_zero else 0
        return [
            {
                "rank": rank,
                "where": "this process" if rank == here else elsewhere,
                "device": "default" if device is None else str(device),
            }
            for rank, device in enumerate(self.devices)
        ]

    # -- state -------------------------------------------------------------------------------------
    def sync(self) -> None:
        """Give every learner this process's state: the variables they hold (weights, optimizer slots, target
        networks). After a checkpoint is loaded into the agent, say. (The random streams go with each call.)"""
        variables = self.graph.variables()
        state = self.graph.backend.read_variables({name: variables[name] for name in self._names})
        self._round("set_state", [(state,)] * len(self.learners))
        if self.mirror is not None:
            self.mirror.agree(state)

    def learner_states(self) -> list[dict[str, np.ndarray]]:
        """The variables of the learners in other processes (what :meth:`sync` gives them), to check they are
        this process's."""
        return self._round("get_state", [()] * len(self.learners))

    # -- calls -------------------------------------------------------------------------------------
    def routes_call(self, api_method: str) -> bool:
        """Whether ``api_method`` runs on every learner (split or not)."""
        return api_method in self.routes

    def execute(self, api_method: str, args: Sequence[Any], checked: bool = False) -> Any:
        """Run ``api_method`` on every learner (its batch split where it steps an optimizer); its outputs.
        ``checked``: the caller checked the inputs against their spaces (else they are checked here, once)."""
        args = list(args)
        if self.graph.validate_inputs and not checked:
            self.graph._check_inputs(api_method, args)
        if self.routes[api_method] == EVERY:
            return self._call(api_method, [args] * self.size, None)[0]
        slices, windows = self._split(api_method, args)
        outputs = self._call(api_method, slices, windows)
        return merge_outputs(outputs, windows, self.graph.api_registry[api_method].output_spaces)

    def _call(
        self, api_method: str, arguments: list[list[Any]], windows: list[RowWindow] | None
    ) -> list[Any]:
        """``api_method`` on every learner, each with its ``arguments`` (and rows): their outputs, in rank order."""
        ops = self.graph.ops
        random_state = ops.random_state()
        rows: Sequence[RowWindow | None] = windows or [None] * self.size
        if self.mirror is not None:
            # Learner 0 runs elsewhere: it gets what changed here, and gives back what it changes.
            given = self.mirror.changes()
            calls: list[tuple] = [
                (api_method, arguments[rank], rows[rank], random_state, given, rank == 0)
                for rank in range(self.size)
            ]
            outputs = self._round("call", calls, what=api_method)
            outputs[0], changed, random_state = outputs[0]
            self.mirror.take(changed)
            if random_state is not None:
                ops.set_random_state(random_state)
            return outputs
        calls = [(api_method, arguments[rank], rows[rank], random_state) for rank in range(1, self.size)]

        def own() -> Any:
            return run_rows(self.graph, self.share, api_method, arguments[0], rows[0])

        return self._round("call", calls, own, what=api_method)

    def _round(self, command: str, payloads: list[tuple], own: Any = None, what: str = "") -> list[Any]:
        """Send ``command`` to the learners in other processes (each its payload), run ``own()`` here
        meanwhile, and collect the answers: ``[own result, *theirs]`` (without ``own``: theirs). Any failure
        stops the group (the others may wait in a sum, or hold answers unread) and raises a LearnerGroupError
        saying which learner failed and why; an interrupt (Ctrl-C) stops it too and goes on as it is."""
        try:
            for learner, payload in zip(self.learners, payloads, strict=True):
                learner.send(command, *payload)
            mine = [own()] if own is not None else []
            return mine + self._collect()
        except Exception as error:
            reason = self._failure(error, what or command)
            self.close()
            raise reason from error
        except BaseException:
            self.close()
            raise

    def _collect(self) -> list[Any]:
        """Every learner's answer, taken as each comes: the first that failed (or died) fails the round at
        once, not after the others, which may wait in a collective for it."""
        answers: dict[int, Any] = {}
        pending = list(self.learners)
        while pending:
            ready = type(pending[0]).wait(pending, READY_SECONDS)
            if not ready:
                raise LearnerGroupError(f"no learner of {len(pending)} answered within {READY_SECONDS:.0f} s")
            for learner in ready:
                answers[id(learner)] = learner.receive(timeout=0)
            pending = [learner for learner in pending if id(learner) not in answers]
        return [answers[id(learner)] for learner in self.learners]

    def _failure(self, error: BaseException, what: str) -> LearnerGroupError:
        """Why a round failed: a learner that died (the others' failures follow from it: a collective it left),
        else one that said why (asked briefly), else ``error``."""
        # A death still under way comes first: the survivors' collectives fail (and they say so, as a learner that
        # failed on its own does) as soon as the dying learner's connections close, before its process has ended.
        dead = self._dead_learner(DYING_SECONDS)
        if dead is not None:
            code = "" if dead.exit_code is None else f" (exit code {dead.exit_code})"
            return LearnerGroupError(f"learner {dead.rank} of {self.size} died{code} in {what}: {error}")
        if isinstance(error, LearnerGroupError):
            return error
        for learner in self.learners:
            try:
                learner.receive(timeout=FAILURE_SECONDS)
            except LearnerFailedError as theirs:
                return theirs
            except LearnerGroupError:  # no answer: it waits in a sum learner 0 never joined
                continue
        where = "this process" if self.remote_zero else "learner 0"
        return LearnerGroupError(f"{where} failed in {what}: {error}; the group is stopped")

    def _dead_learner(self, seconds: float) -> Any:
        """A learner that died, seen within ``seconds``; None where every one lives on."""
        deadline = time.monotonic() + seconds
        while True:
            for learner in self.learners:
                if not learner.alive:
                    return learner
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.05)

    def _split(self, api_method: str, args: list[Any]) -> tuple[list[list[Any]], list[RowWindow]]:
        split = self.agent.split_for_learners(api_method, args, self.size)  # an algorithm's own split
        if split is None:
            split = self._split_rows(api_method, args)
        slices, windows = split
        shares = tuple(window.rows for window in windows)
        windows = [attrs.evolve(window, shares=shares) for window in windows]
        if any(window.rows < 1 for window in windows):
            raise APICallError(
                f"{api_method}: a batch of {windows[0].total} rows for {self.size} learners: each needs at least "
                "one row"
            )
        if self.traits.even_rows and len({window.rows for window in windows}) > 1:
            raise APICallError(
                f"{api_method}: a batch of {windows[0].total} rows for {self.size} learners, "
                f"{[window.rows for window in windows]} each: on backend {self.graph.backend.name!r} every "
                f"learner takes as many rows (one program runs them all): choose the update's batch sizes so "
                f"that its rows divide by {self.size}"
            )
        return slices, windows

    def _split_rows(self, api_method: str, args: list[Any]) -> tuple[list[list[Any]], list[RowWindow]]:
        """Every input's rows (of its batch axis) in ``size`` consecutive shares, the last a row more where
        they do not divide."""
        spaces = list(self.graph._spaces[api_method].values())
        flats = [nested.flatten_with_paths(arg) for arg in args]  # each input's leaves, once
        axes = [leaf_axes(flat, spaces[i] if i < len(spaces) else None) for i, flat in enumerate(flats)]
        sizes = {
            np.shape(leaf)[axis]
            for flat, arg_axes in zip(flats, axes, strict=True)
            for path, leaf in flat.items()
            if (axis := arg_axes[path]) is not None
        }
        if len(sizes) != 1:
            raise APICallError(
                f"{api_method}: a learner group splits a batch by its rows, and this call's inputs have "
                f"{'no batch rank' if not sizes else f'different batch sizes {sorted(sizes)}'}: "
                "it cannot run on more than one learner"
            )
        total = sizes.pop()
        bounds = [rank * total // self.size for rank in range(self.size + 1)]
        windows = [RowWindow(start, end - start, total) for start, end in itertools.pairwise(bounds)]
        slices = [
            [
                window_rows(arg, flat, arg_axes, window)
                for arg, flat, arg_axes in zip(args, flats, axes, strict=True)
            ]
            for window in windows
        ]
        return slices, windows

    def close(self) -> None:
        """Stop the other learners and leave the group (the agent learns alone again)."""
        learners, self.learners = self.learners, []
        try:
            for learner in learners:  # all at once: a collective may wait for every learner to leave
                with contextlib.suppress(Exception):
                    learner.leave()
            for learner in learners:
                with contextlib.suppress(Exception):  # each is stopped (killed, where it must be)
                    learner.close()
            self.launcher.close()
        finally:
            if self.share is not None:
                self.graph.backend.leave_learner_group(self.graph.ops)
                self.share = None
            if getattr(self.agent, "learner_group", None) is self:
                self.agent.learner_group = None


def devices_of(agent: Any) -> Any:
    """Each learner's device, from learner 0's (``device_of(rank)``): where the agent's graph is on a GPU,
    learner ``r`` takes GPU ``r``; None where it is not (every learner as the spec places it)."""
    execution = agent.execution_spec
    device = str((execution.device_map or {}).get("", "")) if execution is not None else ""
    if not device.startswith(("gpu", "cuda")):
        return None
    return lambda rank: f"cuda:{rank}"


class StateMirror:
    """This process's graph in the state of a group whose learner 0 runs elsewhere: before each routed call
    the variables this process changed since they last agreed (a counter acting advanced) go to the learners,
    and after it learner 0's changes (weights, optimizer slots) come back here, so both sides see every write
    in the order it happened."""

    def __init__(self, graph: Any, names: list[str]) -> None:
        self.graph = graph
        self.names = list(names)
        self.agreed: dict[str, np.ndarray] = {}

    def _read(self) -> dict[str, np.ndarray]:
        variables = self.graph.variables()
        return self.graph.backend.read_variables({name: variables[name] for name in self.names})

    def agree(self, state: dict[str, np.ndarray]) -> None:
        self.agreed = {name: np.array(value) for name, value in state.items() if name in self.names}

    def changes(self) -> dict[str, np.ndarray]:
        """What this process changed since the last agreement (it agrees from now on)."""
        now = self._read()
        changed = changed_values(self.agreed, now)
        self.agreed.update(changed)
        return changed

    def take(self, changed: dict[str, np.ndarray]) -> None:
        """Learner 0's changes, into this process's graph."""
        mine = {name: value for name, value in changed.items() if name in self.names}
        if mine:
            write_some(self.graph, mine)
            self.agreed.update(mine)
