"""The torch backend's learner-group collective: ``torch.distributed``, gloo on the CPU and NCCL on CUDA."""

from __future__ import annotations

import datetime
from typing import Any

import torch
import torch.distributed as dist

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
        dist.init_process_group(
            kind, init_method=f"tcp://{address}", rank=rank, world_size=size, timeout=TIMEOUT
        )
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
