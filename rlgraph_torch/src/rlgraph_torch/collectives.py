"""The torch backend's learner-group collective: ``torch.distributed``, gloo on the CPU and NCCL on CUDA.

Its sockets listen on the addresses the group gives: the store where the learners meet (a ``TCPStore`` served
by learner 0) on learner 0's address alone, and gloo's (or NCCL's) on the network interface of each learner's
own address (``GLOO_SOCKET_IFNAME``, ``NCCL_SOCKET_IFNAME``, where the user set neither): a group on one
machine listens on the loopback interface alone.
"""

from __future__ import annotations

import datetime
import os
import socket
from typing import Any

import torch
import torch.distributed as dist

from rlgraph.graph.collectives import interface_of, split_address
from rlgraph.utils.environment import environment_variables
from rlgraph_torch import devices

TIMEOUT = datetime.timedelta(minutes=10)
"""How long a learner waits for the others (to join, or in a sum): a learner that died fails the rest then."""


class TorchCollectives:
    """The learner-group collective's part of the backend."""

    def open_collective(
        self, rank: int, size: int, address: str, addresses: list[str], device: str | None
    ) -> Any:
        if dist.is_initialized():
            raise RuntimeError("this process has joined a torch.distributed group already")
        resolved = devices.resolve(device)
        kind = "nccl" if resolved is not None and resolved.type == "cuda" else "gloo"
        store = meeting_store(address, rank, size)
        interface = interface_of(split_address(addresses[rank])[0])
        if kind == "nccl" and interface is not None:  # (NCCL reads it when it first communicates: it stays)
            os.environ.setdefault("NCCL_SOCKET_IFNAME", interface)
        # gloo reads its interface as the group is made; a user's own choice stands.
        chosen = None if os.environ.get("GLOO_SOCKET_IFNAME") else interface
        with environment_variables({"GLOO_SOCKET_IFNAME": chosen if kind == "gloo" else None}):
            dist.init_process_group(kind, store=store, rank=rank, world_size=size, timeout=TIMEOUT)
        return dist.group.WORLD

    def all_reduce_sum(self, group: Any, values: list[torch.Tensor]) -> list[torch.Tensor]:
        # One collective per dtype: the values flattened into one buffer.
        sums: list[Any] = [None] * len(values)
        for dtype in dict.fromkeys(value.dtype for value in values):  # the same order in every learner
            chosen = [index for index, value in enumerate(values) if value.dtype == dtype]
            flat = torch.cat([values[index].reshape(-1) for index in chosen])
            dist.all_reduce(flat, op=dist.ReduceOp.SUM, group=group)
            start = 0
            for index in chosen:
                size = values[index].numel()
                sums[index] = flat[start : start + size].view_as(values[index])
                start += size
        return sums

    def close_collective(self, group: Any) -> None:
        if dist.is_initialized():
            dist.destroy_process_group()


def meeting_store(address: str, rank: int, size: int) -> dist.TCPStore:
    """The store where the group's learners meet, served by learner 0 at ``address`` (``host:port``): on that
    address alone (torch's own ``TCPStore`` server listens on every interface), the others its clients."""
    host, port = split_address(address)
    if rank != 0:
        return dist.TCPStore(host, port, size, is_master=False, timeout=TIMEOUT)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listening = socket.create_server((host, port), family=family, backlog=max(size, 128))
    return dist.TCPStore(
        host, port, size, is_master=True, timeout=TIMEOUT, master_listen_fd=listening.detach()
    )
