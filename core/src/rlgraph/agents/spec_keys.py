"""Which keys of the base an agent uses: the Agent's arguments, and the keys no agent uses.

Every key of an agent spec either does what it says or is rejected. Every agent uses :data:`BASE_KEYS`.
An agent's config (:mod:`rlgraph.agents.config`) holds the other keys of the base it uses. An agent class
without a config class may instead declare them in a class attribute ``spec_keys``: the Agent's arguments
(``"network_spec"``, from :data:`AGENT_ARGUMENTS`) and nested keys (``"update_spec.batch_size"``); a subclass
adds to its parents' declarations, and its config is derived from them. A key *given* to an agent (present
with a value other than None) that the agent does not use is a SpecError naming its full key path. An
agent class that declares neither is taken to use every key of the base.

Keys no agent here uses: RLgraph's TensorFlow 1 settings that its own configs hold (:data:`NO_EFFECT`)
are accepted with a warning; the others (:data:`UNSUPPORTED`) are rejected with what to do instead,
unless the agent class declares them.
"""

from __future__ import annotations

import functools

import attrs

from rlgraph.agents.specs import NESTED_SPECS

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


def declarable_keys() -> tuple[str, ...]:
    """Every key an agent class may declare in ``spec_keys``, in the order of the Agent's arguments."""
    nested = [
        f"{name}.{field.name}"
        for name, spec_class in NESTED_SPECS.items()
        for field in attrs.fields(spec_class)
    ]
    return (*AGENT_ARGUMENTS, *nested)


@functools.cache
def used_keys(agent_class: type) -> frozenset[str] | None:
    """The keys of the base that ``agent_class`` uses: :data:`BASE_KEYS` and those it and its parents
    declare in ``spec_keys``; None when none of them declares any (taken to use every key)."""
    declarations = [vars(klass)["spec_keys"] for klass in agent_class.__mro__ if "spec_keys" in vars(klass)]
    if not declarations:
        return None
    declared: set[str] = set()
    for keys in declarations:
        if isinstance(keys, str):
            raise TypeError(
                f"{agent_class.__name__}.spec_keys must be a tuple of keys, got the string {keys!r}"
            )
        declared.update(keys)
    unknown = sorted(declared - set(declarable_keys()))
    if unknown:
        raise TypeError(
            f"{agent_class.__name__}.spec_keys: unknown keys {unknown}; declare Agent arguments "
            f"({', '.join(AGENT_ARGUMENTS)}) or nested keys such as 'update_spec.batch_size'"
        )
    return BASE_KEYS | declared
