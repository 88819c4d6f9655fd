"""Action masks: a state that says which discrete actions are allowed.

A state space that is a :class:`~rlgraph.spaces.Dict` with an ``action_mask`` key (PettingZoo's and
sb3-contrib's convention) masks the policy: the mask holds one entry per action of the agent's one
``IntBox(n)`` action space, ``shape == (*action_shape, n)``, true (or 1) where the action is allowed. It
is a ``BoolBox``, or an ``IntBox`` over {0, 1} (Gymnasium's ``MultiBinary``, as environments give it).

Preprocessing and networks never see the mask: where one other key remains, they see that key's
value alone, so ``Dict(observations=FloatBox(shape=(4,)), action_mask=BoolBox(shape=(3,)))`` works with
the ``network_spec`` of ``FloatBox(shape=(4,))``; with several, a ``Dict`` of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from rlgraph.errors import SpaceError
from rlgraph.spaces.box import BoolBox, IntBox
from rlgraph.spaces.containers import Dict
from rlgraph.spaces.space import Space

ACTION_MASK = "action_mask"
#: The logit (or Q-value) a masked action gets: finite, so that its probability is exactly 0 and
#: ``p * log p`` is 0, not NaN, while no draw of Gumbel noise lifts it above an allowed action's.
MASKED_LOGIT = -1e9


def action_mask_space(state_space: Space) -> Space | None:
    """The mask's space if ``state_space`` is a ``Dict`` holding one, else None."""
    if isinstance(state_space, Dict) and ACTION_MASK in state_space:
        return state_space[ACTION_MASK]
    return None


def without_action_mask(states: Any) -> Any:
    """``states`` (a space, values or a component's records) as networks see them: without the mask;
    where one other key remains, that key's value alone. Anything without a mask comes back as it is."""
    if not isinstance(states, Mapping) or ACTION_MASK not in states:
        return states
    rest = {key: value for key, value in states.items() if key != ACTION_MASK}
    if len(rest) == 1:
        return next(iter(rest.values()))
    return states._from_children(rest, states._ranks()) if isinstance(states, Dict) else rest


def action_mask_of(states: Any) -> Any:
    """The mask in ``states`` (values or records), or None where they hold none."""
    if isinstance(states, Mapping) and ACTION_MASK in states:
        return states[ACTION_MASK]
    return None


def check_action_mask(state_space: Space, action_space: Space, agent: str, supported: bool) -> None:
    """Refuse, naming what to change, a state space whose action mask cannot mask ``action_space`` (one
    ``IntBox(n)`` with a mask of shape ``(*shape, n)``), or that ``agent`` cannot honour."""
    mask = action_mask_space(state_space)
    if mask is None:
        return
    if not supported:
        raise SpaceError(
            f"{agent} does not honour action masks, and the state space holds {ACTION_MASK!r}; the agents "
            "that do: DQN, Ape-X, PPO, actor-critic, IMPALA and discrete SAC (or rename the key to use "
            "it as an observation)"
        )
    assert isinstance(state_space, Dict)  # it holds a mask
    if len(state_space) < 2:
        raise SpaceError(f"a state space holding only {ACTION_MASK!r} leaves the policy nothing to see")
    if not isinstance(action_space, IntBox) or action_space.num_categories is None:
        raise SpaceError(
            f"an {ACTION_MASK!r} masks one discrete action space, IntBox(n); the action space is {action_space}"
        )
    expected = (*action_space.shape, action_space.num_categories)
    if not _is_binary(mask) or tuple(mask.shape) != expected:
        raise SpaceError(
            f"the {ACTION_MASK!r} for actions {action_space} must be a BoolBox(shape={expected}) (or an IntBox "
            f"over {{0, 1}} of that shape: true where an action is allowed); got {mask}"
        )


def _is_binary(space: Space) -> bool:
    if isinstance(space, BoolBox):
        return True
    return isinstance(space, IntBox) and bool(np.all(space.low == 0)) and bool(np.all(space.high == 2))
