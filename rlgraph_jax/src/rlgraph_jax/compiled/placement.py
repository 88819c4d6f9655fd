"""Where a population lies: its members split over the devices, one share each."""

from __future__ import annotations

import logging
from typing import Any

import jax
from jax.sharding import Mesh, NamedSharding, PartitionSpec

LOG = logging.getLogger("rlgraph_jax")


class Placement:
    """The members of a population of ``population`` over ``devices`` (default: every device of JAX's default
    backend): with several devices that split the members evenly, each member's state lies on one device and
    the program runs each device's members there (the members never exchange anything, so the split program
    has no communication); otherwise everything lies on the first device."""

    def __init__(self, population: int, devices: list[Any] | None = None) -> None:
        devices = list(devices or jax.devices())
        if len(devices) > 1 and population % len(devices):
            LOG.warning(
                "a population of %d does not split evenly over %d devices: it trains on %s alone",
                population,
                len(devices),
                devices[0],
            )
        #: The devices the members are split over (one device: no split).
        self.devices = devices if population % len(devices) == 0 else devices[:1]
        mesh = Mesh(self.devices, ("members",))
        self.members = NamedSharding(mesh, PartitionSpec("members"))
        self.replicated = NamedSharding(mesh, PartitionSpec())

    def put(self, state: Any, split: Any) -> Any:
        """``state`` on the devices: the subtrees where ``split`` (a prefix of its tree, of bools) holds split
        over the members, the others on every device."""

        def place(members: bool, subtree: Any) -> Any:
            sharding = self.members if members else self.replicated
            return jax.tree_util.tree_map(lambda leaf: jax.device_put(leaf, sharding), subtree)

        return jax.tree_util.tree_map(place, split, state)
