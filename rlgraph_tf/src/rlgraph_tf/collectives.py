"""The TensorFlow backend's learner-group collective: ``tf.distribute``'s collective all-reduce (the op
``MultiWorkerMirroredStrategy`` runs on), inside the API methods' ``tf.function`` graphs.

The learners form a TensorFlow cluster (job ``worker``, one task per learner, each serving gRPC at its own
address's port, on every network interface: TensorFlow binds 0.0.0.0 whatever host it is given, so a group
is refused unless allowed: ``listens_on_every_interface``) with collective ops enabled. That must happen before the process creates a tensor, so every learner of
a TensorFlow group runs in a process of its own and joins before it builds its graph (``collective_traits``).
Each all-reduce in a traced program has its own instance key, counted as programs are traced: every learner
traces the same programs in the same order, since every learner runs the same calls.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import attrs
import tensorflow as tf
from tensorflow.compiler.xla.tsl.protobuf import coordination_config_pb2
from tensorflow.core.protobuf import tensorflow_server_pb2
from tensorflow.python.eager import context
from tensorflow.python.ops import collective_ops

from rlgraph.graph.collectives import CollectiveTraits, RowWindow, draw_rows

JOB = "worker"
LEADER = f"/job:{JOB}/replica:0/task:0"
GROUP_KEY = 1
TIMEOUT_SECONDS = 600.0
"""How long a learner waits in an all-reduce for the others: a learner that died fails the rest then."""


@attrs.define
class TfGroup:
    """This process's learner of a TensorFlow cluster of ``size``: its ``rank``, the next collective's instance
    key, and its place in the group (``share``: the rows of the call under way, which a program is traced
    for: its gradients' weight and its random draws' rows are constants of the trace)."""

    rank: int
    size: int
    next_instance: int = 1
    share: Any = None

    def instance_key(self) -> int:
        key, self.next_instance = self.next_instance, self.next_instance + 1
        return key

    def trace_key(self) -> tuple:
        """What a program is traced for besides its constants: the rows of the call under way, and how the
        call is split over the group (a new split traces anew on every learner at once, so that their
        collectives' instance keys stay paired)."""
        window = None if self.share is None else self.share.window
        return () if window is None else (window.offset, window.rows, window.total, window.shares)

    def draw_rows(
        self, draw: Callable[..., Any], shape: Any, window: RowWindow, *args: Any, **kwargs: Any
    ) -> Any:
        """The learner's rows of a draw for the whole batch, where its leading axis is the learner's rows: a
        traced shape's rows are known when the program runs (``tf.cond``)."""
        if tf.is_tensor(shape) and shape.shape.rank == 1:  # a shape vector
            lead = shape[0]
            whole_shape: Any = tf.concat([tf.constant([window.total], shape.dtype), shape[1:]], axis=0)
        else:
            dims = tuple(shape) if isinstance(shape, tuple | list) else (shape,)
            if not dims or not tf.is_tensor(dims[0]):  # a known leading axis
                return draw_rows(draw, shape, window, *args, **kwargs)
            lead, whole_shape = dims[0], (window.total, *dims[1:])

        def rows() -> Any:
            return draw(whole_shape, *args, **kwargs)[window.offset : window.offset + window.rows]

        return tf.cond(
            tf.equal(tf.cast(lead, tf.int64), window.rows), rows, lambda: draw(shape, *args, **kwargs)
        )


#: The group this process joined (one at most: TensorFlow keeps a process's cluster for its life).
GROUP: TfGroup | None = None


class TFCollectives:
    """The learner-group collective's part of the backend."""

    # TensorFlow 2.21's gRPC server listens on 0.0.0.0 (every interface, IPv6 too) whatever host the cluster spec
    # gives its task ("127.0.0.1:port", "localhost:port", "[::1]:port" alike), and its only protocol is "grpc".
    collective_traits = CollectiveTraits(
        joins_before_build=True,
        listens_on_every_interface=True,
        open_servers_reason=(
            "the collective's servers (TensorFlow's gRPC servers) listen on every network interface, whatever "
            "address they are given, and run any graph a client sends, so anyone who can reach a learner's "
            "machine could run code in it"
        ),
    )

    def open_collective(
        self, rank: int, size: int, address: str, addresses: list[str], device: str | None
    ) -> TfGroup:
        global GROUP
        if GROUP is not None:
            raise RuntimeError("this process has joined a TensorFlow learner group already")
        runtime = context.context()
        runtime.configure_collective_ops(
            collective_leader=LEADER, device_filters=(f"/job:{JOB}/task:{rank}",)
        )
        runtime.configure_coordination_service(
            service_type="standalone",
            service_leader=LEADER,
            coordinated_jobs=[coordination_config_pb2.CoordinatedJob(name=JOB, num_tasks=size)],
        )
        cluster = tf.train.ClusterSpec({JOB: list(addresses)})
        server = tensorflow_server_pb2.ServerDef(
            cluster=cluster.as_cluster_def(),
            default_session_config=copy.deepcopy(runtime.config),
            job_name=JOB,
            task_index=rank,
            protocol="grpc",
        )
        runtime.enable_collective_ops(server)  # returns once every learner's server answers
        runtime.ensure_initialized()
        GROUP = TfGroup(rank, size)
        return GROUP

    def all_reduce_sum(self, group: TfGroup, values: list[tf.Tensor]) -> list[tf.Tensor]:
        # One collective per dtype: the values flattened into one buffer.
        sums: list[Any] = [None] * len(values)
        for dtype in dict.fromkeys(value.dtype for value in values):  # the same order in every learner
            chosen = [index for index, value in enumerate(values) if value.dtype == dtype]
            flat = tf.concat([tf.reshape(values[index], [-1]) for index in chosen], axis=0)
            summed = collective_ops.all_reduce_v2(
                flat,
                group_size=group.size,
                group_key=GROUP_KEY,
                instance_key=group.instance_key(),
                merge_op="Add",
                final_op="Id",
                timeout=TIMEOUT_SECONDS,
            )
            sizes = [values[index].shape.num_elements() for index in chosen]  # (gradients: static shapes)
            for index, part in zip(chosen, tf.split(summed, sizes), strict=True):
                sums[index] = tf.reshape(part, tf.shape(values[index]))
        return sums

    def close_collective(self, group: TfGroup) -> None:
        """TensorFlow keeps a process's cluster for its life: the process leaves the group as it ends."""
