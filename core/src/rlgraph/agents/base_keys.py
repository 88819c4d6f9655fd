"""The keys of the base: those every agent uses, the Agent's arguments, and the keys no agent uses.

Every key of an agent spec either does what it says or is rejected. Every agent uses :data:`BASE_KEYS`.
An agent's config (:mod:`rlgraph.agents.config`) holds the other keys of the base it uses: the Agent's
arguments (:data:`AGENT_ARGUMENTS`) and the nested keys its nested specs name. A key *given* to an agent
(present with a value other than None) that its config does not use is a SpecError naming its full key path.

Keys no agent here uses: RLgraph's TensorFlow 1 settings that its own configs hold (:data:`NO_EFFECT`)
are accepted with a warning; the others (:data:`UNSUPPORTED`) are rejected with what to do instead.
"""

from __future__ import annotations

#: The base Agent's arguments that configure an agent's components and learning: used by the agents
#: that declare them.
AGENT_ARGUMENTS = (
    "discount",
    "preprocessing_spec",
    "network_spec",
    "internal_states_space",
    "policy_spec",
    "action_adapter_spec",
    "exploration_spec",
    "optimizer_spec",
)

#: The Agent's arguments that configure components (None: the algorithm's default component).
COMPONENT_SPECS = tuple(name for name in AGENT_ARGUMENTS if name.endswith("_spec"))

#: The keys the base Agent uses for every agent: its spaces, backend and name, the graph's seed and
#: devices, the observe buffers, the worker's update schedule, and where checkpoints go and how many stay.
BASE_KEYS = frozenset(
    {
        "state_space",
        "action_space",
        "backend",
        "auto_build",
        "name",
        "role",
        "execution_spec.seed",
        "execution_spec.device_map",
        "execution_spec.gpu_spec",
        "execution_spec.intra_op_threads",
        "execution_spec.inter_op_threads",
        "execution_spec.check_numerics",
        "observe_spec.buffer_size",
        "observe_spec.buffer_enabled",
        "update_spec.update_mode",
        "update_spec.do_updates",
        "update_spec.update_interval",
        "update_spec.steps_before_update",
        "saver_spec.directory",
        "saver_spec.max_checkpoints",
    }
)

_TF1_SUMMARY = (
    "configured TensorFlow 1 summaries, which an agent does not write: it has no effect (`rlgraph train` "
    "writes TensorBoard scalars into its run folder)"
)
_PERIODIC_CHECKPOINTS = (
    "an agent writes checkpoints only when store_model() is called: remove it (for checkpoints during "
    "training, give the run spec of `rlgraph train` checkpoint_interval and keep_checkpoints)"
)

#: RLgraph's TensorFlow 1 keys that its configs hold: accepted with a warning that they do nothing.
NO_EFFECT: dict[str, str] = {
    "execution_spec.session_config": (
        "configured TensorFlow 1 sessions, which do not exist here: it has no effect (place components "
        "with execution_spec.device_map; set threads with execution_spec.intra_op_threads and inter_op_threads)"
    ),
    "summary_spec.summary_regexp": _TF1_SUMMARY,
    "summary_spec.save_steps": _TF1_SUMMARY,
    "summary_spec.save_secs": _TF1_SUMMARY,
}

#: Keys no agent here uses, rejected with why and what to do instead.
UNSUPPORTED: dict[str, str] = {
    "execution_spec.ray_spec": (
        "configures RLgraph's distributed executors on Ray (the rlgraph-ray package, not yet available), "
        "which an agent built in this process does not use: remove it to build the agent here"
    ),
    "execution_spec.disable_monitoring": (
        "switched off TensorFlow 1's monitored session, which does not exist here: remove it"
    ),
    "execution_spec.trace_enabled": "turned on TensorFlow 1 timeline traces, which do not exist here: remove it",
    "saver_spec.save_steps": _PERIODIC_CHECKPOINTS,
    "saver_spec.save_secs": _PERIODIC_CHECKPOINTS,
    "summary_spec.directory": (
        "an agent writes no summaries: remove it (`rlgraph train` writes TensorBoard event files into its "
        "run folder)"
    ),
}
