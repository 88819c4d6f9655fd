"""RLgraph memory components (registered as entry points in pyproject.toml).

Names are imported lazily: ``import rlgraph_memories`` imports no component module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlgraph.utils.lazy import lazy_exports

# public name -> module that defines it
_LAZY = {
    "Memory": "rlgraph_memories.memory",
    "ReplayMemory": "rlgraph_memories.replay",
    "PrioritizedReplay": "rlgraph_memories.prioritized",
    "RingBuffer": "rlgraph_memories.ring_buffer",
    "FIFOQueue": "rlgraph_memories.fifo_queue",
    "FrameReplay": "rlgraph_memories.frame_replay",
    "SegmentTree": "rlgraph_memories.segment_tree",
}

__all__ = [
    "FIFOQueue",
    "FrameReplay",
    "Memory",
    "PrioritizedReplay",
    "ReplayMemory",
    "RingBuffer",
    "SegmentTree",
]

if TYPE_CHECKING:
    from rlgraph_memories.fifo_queue import FIFOQueue
    from rlgraph_memories.frame_replay import FrameReplay
    from rlgraph_memories.memory import Memory
    from rlgraph_memories.prioritized import PrioritizedReplay
    from rlgraph_memories.replay import ReplayMemory
    from rlgraph_memories.ring_buffer import RingBuffer
    from rlgraph_memories.segment_tree import SegmentTree

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
