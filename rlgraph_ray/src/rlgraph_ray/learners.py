"""A learner group's other learners as Ray actors, in a placement group spread over the cluster's nodes."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from typing import Any

import ray
from ray.util.placement_group import placement_group, placement_group_table, remove_placement_group
from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

from rlgraph.agents.group_learners import LOOPBACK, READY_SECONDS, GroupLearner, free_port
from rlgraph.errors import LearnerFailedError, LearnerGroupError
from rlgraph_ray.cluster import ADDRESS_VARIABLE, cpus_for, last_line, started_here

DEATH_SECONDS = 30.0
"""How long a learner's last command may take to fail after another's failure, to tell a dead learner."""
PLACEMENT_TIMEOUT = 30.0
"""Seconds to wait for the cluster to place the learners (each its CPUs, or a GPU of its own)."""


class RayLearners:
    """Launches the learners of a group that run in other processes as Ray actors. It applies where this process
    uses Ray (a Ray executor started or joined it, or ``$RLGRAPH_RAY_ADDRESS`` names a cluster); a run that uses
    no Ray keeps its learners in local processes.

    On a cluster joined by address, each learner takes one bundle of a placement group (a GPU where its device
    is one, else ``num_cpus``), spread over the nodes, and learners the cluster cannot place are refused. On the
    embedded cluster RLgraph started (one node, this machine's), each takes ``num_cpus`` where they fit in the
    CPUs left free, else its share of them (:func:`~rlgraph_ray.cluster.cpus_for`): never refused for CPUs.
    Where every learner of the group runs on one machine, they meet on the loopback address (127.0.0.1), else
    at their nodes' addresses."""

    #: Where each learner it launches runs, as a run's summary names it.
    where = "a Ray actor"

    @staticmethod
    def applies() -> bool:
        return ray.is_initialized() or bool(os.environ.get(ADDRESS_VARIABLE))

    def __init__(self) -> None:
        from rlgraph_ray.cluster import connect

        connect()
        self.group: Any = None
        self.host: str | None = None  # where the learners meet: known once they are placed

    def address(self) -> str:
        host = self.host or ray.util.get_node_ip_address()
        return f"{host}:{free_port(host)}"

    def launch(
        self,
        agent_class: type,
        config: Any,
        ranks: Sequence[int],
        size: int,
        devices: list[Any],
        num_cpus: float = 1.0,
    ) -> list[Any]:
        ranks = list(ranks)
        if started_here():
            bundles = self._fit(ranks, devices, num_cpus)
            nodes = {ray.get_runtime_context().get_node_id()}
        else:
            bundles = [_bundle(devices[rank], num_cpus) for rank in ranks]
            nodes = self._place(bundles, with_this_process=0 not in ranks)
        # One machine: the group's servers listen on the loopback interface alone.
        self.host = LOOPBACK if len(nodes) == 1 else None
        return [
            # A GPU actor sees its own GPU alone (Ray sets CUDA_VISIBLE_DEVICES): it is device 0 there.
            RayLearner(
                self.group,
                index,
                bundle,
                agent_class,
                config,
                rank,
                size,
                "cuda:0" if "GPU" in bundle else devices[rank],
                self.host,
            )
            for index, (rank, bundle) in enumerate(zip(ranks, bundles, strict=True))
        ]

    def _fit(self, ranks: list[int], devices: list[Any], num_cpus: float) -> list[dict[str, float]]:
        """The learners' resources on the embedded cluster: their CPUs fitted to those free (a GPU learner its
        GPU, where the machine has one free for each)."""
        free = ray.available_resources()
        bundles = [_bundle(devices[rank], num_cpus) for rank in ranks]
        on_cpus = [bundle for bundle in bundles if "CPU" in bundle]
        gpus = len(bundles) - len(on_cpus)
        if gpus > free.get("GPU", 0.0):
            raise LearnerGroupError(
                f"{gpus} learners on GPUs, each its own, but Ray sees {free.get('GPU', 0.0):g} GPUs free on this "
                "machine: train with fewer learners, or on the CPU"
            )
        cpus = cpus_for(max(len(on_cpus), 1), num_cpus, free.get("CPU", 0.0))
        for bundle in on_cpus:
            bundle["CPU"] = cpus
        return bundles

    def _place(self, bundles: list[dict[str, float]], with_this_process: bool) -> set[str]:
        """Reserve the learners' bundles on a joined cluster (a placement group, spread over its nodes): the
        nodes of the group's learners (this process's among them, where it is learner 0)."""
        self.group = placement_group(bundles, strategy="SPREAD")
        if not self.group.wait(PLACEMENT_TIMEOUT):
            free = {key: value for key, value in ray.available_resources().items() if key in ("CPU", "GPU")}
            learners = "1 learner" if len(bundles) == 1 else f"{len(bundles)} learners"
            raise LearnerGroupError(
                f"Ray cannot place {learners} ({bundles[0]} each) within {PLACEMENT_TIMEOUT:.0f} s: the cluster "
                f"it joined has {free or 'nothing'} free. Give the workers fewer CPUs (executor.num_cpus_per_worker "
                "below 1 shares them) or the learners (num_cpus_per_learner), or add nodes"
            )
        nodes = set(placement_group_table(self.group)["bundles_to_node_id"].values())
        if with_this_process:
            nodes.add(ray.get_runtime_context().get_node_id())
        return nodes

    def close(self) -> None:
        if self.group is not None:
            remove_placement_group(self.group)
            self.group = None


def _bundle(device: Any, num_cpus: float) -> dict[str, float]:
    return (
        {"GPU": 1.0} if device is not None and str(device).startswith(("cuda", "gpu")) else {"CPU": num_cpus}
    )


class RayGroupLearner(GroupLearner):
    """A group's learner in a Ray actor: reached at ``host`` (default: its node's address)."""

    def __init__(
        self, agent_class: type, config: Any, rank: int, size: int, device: Any, host: str | None = None
    ) -> None:
        host = host or ray.util.get_node_ip_address()
        super().__init__(agent_class, config, rank, size, device, host=host)


class RayLearner:
    """Learner ``rank`` (a :class:`~rlgraph.agents.group_learners.GroupLearner`) as a Ray actor with ``bundle``'s
    resources, in bundle ``index`` of ``group`` where one is given, reached at ``host`` (default: its node's
    address); the same :meth:`send` / :meth:`receive` as a local learner's."""

    def __init__(
        self,
        group: Any,
        index: int,
        bundle: dict[str, float],
        agent_class: type,
        config: Any,
        rank: int,
        size: int,
        device: Any,
        host: str | None = None,
    ) -> None:
        actor_class = ray.remote(
            num_cpus=bundle.get("CPU", 0.0), num_gpus=bundle.get("GPU", 0.0), max_restarts=0
        )(RayGroupLearner)
        if group is not None:  # its bundle of the group's placement group
            strategy = PlacementGroupSchedulingStrategy(
                placement_group=group, placement_group_bundle_index=index
            )
            actor_class = actor_class.options(scheduling_strategy=strategy)
        self.actor = actor_class.remote(agent_class, config, rank, size, device, host)
        self.rank, self.exit_code = rank, None
        self._pending: Any = None
        self._leaving: Any = None

    @staticmethod
    def wait(learners: Sequence[RayLearner], timeout: float) -> list[RayLearner]:
        """Those of ``learners`` whose answer (or failure) has come, once one has (none after ``timeout``)."""
        pending = {learner._pending: learner for learner in learners}
        ready, _ = ray.wait(list(pending), num_returns=1, timeout=timeout)
        if ready:  # and any others that have come meanwhile
            ready, _ = ray.wait(list(pending), num_returns=len(pending), timeout=0)
        return [pending[reference] for reference in ready]

    @property
    def alive(self) -> bool:
        """False once its last command failed because the actor died (its node, say); asked after a failure."""
        if self._pending is None:
            return True
        ready, _ = ray.wait([self._pending], timeout=DEATH_SECONDS)
        if not ready:
            return True
        try:
            ray.get(self._pending)
        except ray.exceptions.RayActorError:
            return False
        except ray.exceptions.RayError:
            return True
        return True

    def send(self, command: str, *args: Any) -> None:
        self._pending = getattr(self.actor, command).remote(*args)

    def receive(self, timeout: float | None = READY_SECONDS) -> Any:
        try:
            return ray.get(self._pending, timeout=timeout)
        except ray.exceptions.GetTimeoutError as error:
            raise LearnerGroupError(f"learner {self.rank} did not answer within {timeout:.0f} s") from error
        except ray.exceptions.RayActorError as error:
            raise LearnerGroupError(f"learner {self.rank} died: {last_line(error)}") from error
        except ray.exceptions.RayTaskError as error:
            raise LearnerFailedError(f"learner {self.rank} failed: {last_line(error)}") from error

    def leave(self) -> None:
        """Ask the learner to leave the group (:meth:`close` waits for it, then ends the actor)."""
        if self._leaving is None:
            self._leaving = self.actor.leave.remote()

    def close(self) -> None:
        with contextlib.suppress(Exception):  # a dead or stuck learner is killed all the same
            self.leave()
            ray.get(self._leaving, timeout=10)
        ray.kill(self.actor)
