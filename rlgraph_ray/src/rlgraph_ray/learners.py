"""A learner group's other learners as Ray actors, in a placement group spread over the cluster's nodes."""

from __future__ import annotations

import contextlib
import os
from typing import Any

import ray
from ray.util.placement_group import placement_group, remove_placement_group
from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

from rlgraph.agents.learner_group import (
    READY_SECONDS,
    GroupLearner,
    LearnerFailedError,
    LearnerGroupError,
    free_port,
)
from rlgraph_ray.cluster import ADDRESS_VARIABLE, last_line

DEATH_SECONDS = 30.0
"""How long a learner's last command may take to fail after another's failure, to tell a dead learner."""
PLACEMENT_TIMEOUT = 30.0
"""Seconds to wait for the cluster to place the learners (each needs a CPU or a GPU of its own)."""


class RayLearners:
    """Launches learners 1 to N-1 of a group as Ray actors: one bundle of a placement group each (a GPU where
    the learner's device is one, else a CPU), spread over the nodes. It applies where this process uses Ray
    (a Ray executor started or joined it, or ``$RLGRAPH_RAY_ADDRESS`` names a cluster); a run that uses no Ray
    keeps its learners in local processes."""

    @staticmethod
    def applies() -> bool:
        return ray.is_initialized() or bool(os.environ.get(ADDRESS_VARIABLE))

    def __init__(self) -> None:
        from rlgraph_ray.cluster import connect

        connect()
        self.group: Any = None

    def address(self) -> str:
        host = ray.util.get_node_ip_address()
        return f"{host}:{free_port(host)}"

    def launch(
        self, agent_class: type, config: Any, size: int, address: str, devices: list[Any]
    ) -> list[Any]:
        bundles = [_bundle(devices[rank]) for rank in range(1, size)]
        self.group = placement_group(bundles, strategy="SPREAD")
        if not self.group.wait(PLACEMENT_TIMEOUT):
            free = {key: value for key, value in ray.available_resources().items() if key in ("CPU", "GPU")}
            raise LearnerGroupError(
                f"Ray cannot place {size - 1} more learners ({bundles[0]} each) within {PLACEMENT_TIMEOUT:.0f} s: "
                f"the cluster has {free or 'nothing'} free. Give the workers fewer CPUs "
                "(executor.num_cpus_per_worker below 1 shares them), or add nodes"
            )
        # A GPU actor sees its own GPU alone (Ray sets CUDA_VISIBLE_DEVICES): it is device 0 there.
        actor_devices = [
            "cuda:0" if "GPU" in bundle else devices[index + 1] for index, bundle in enumerate(bundles)
        ]
        return [
            RayLearner(
                self.group,
                index,
                bundles[index],
                agent_class,
                config,
                index + 1,
                size,
                address,
                actor_devices[index],
            )
            for index in range(size - 1)
        ]

    def close(self) -> None:
        if self.group is not None:
            remove_placement_group(self.group)
            self.group = None


def _bundle(device: Any) -> dict[str, float]:
    return {"GPU": 1.0} if device is not None and str(device).startswith(("cuda", "gpu")) else {"CPU": 1.0}


class RayLearner:
    """Learner ``rank`` (a :class:`~rlgraph.agents.learner_group.GroupLearner`) as a Ray actor in bundle
    ``index`` of the placement group; the same :meth:`send` / :meth:`receive` as a local learner's."""

    def __init__(
        self,
        group: Any,
        index: int,
        bundle: dict[str, float],
        agent_class: type,
        config: Any,
        rank: int,
        size: int,
        address: str,
        device: Any,
    ) -> None:
        strategy = PlacementGroupSchedulingStrategy(placement_group=group, placement_group_bundle_index=index)
        actor_class = ray.remote(
            num_cpus=bundle.get("CPU", 0.0), num_gpus=bundle.get("GPU", 0.0), max_restarts=0
        )
        self.actor = (
            actor_class(GroupLearner)
            .options(scheduling_strategy=strategy)
            .remote(agent_class, config, rank, size, address, device)
        )
        self.rank, self.exit_code = rank, None
        self._pending = self.actor.variable_names.remote()
        self.actor.join.remote()  # runs after the names: learner 0 joins once it has them all

    @property
    def alive(self) -> bool:
        """False once its last command failed because the actor died (its node, say); asked after a failure."""
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

    def close(self) -> None:
        with contextlib.suppress(Exception):  # a dead or stuck learner is killed all the same
            ray.get(self.actor.leave.remote(), timeout=10)
        ray.kill(self.actor)
