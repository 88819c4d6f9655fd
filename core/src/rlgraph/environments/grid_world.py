"""RLgraph's deterministic grid world, the small environment of its learning tests."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from rlgraph.environments.environment import Environment, StepResult
from rlgraph.errors import SpecError
from rlgraph.spaces import BoolBox, Dict, IntBox
from rlgraph.spaces.masks import ACTION_MASK
from rlgraph.utils.naming import suggestion_text

MAPS: dict[str, tuple[str, ...]] = {
    "2x2": (
        "SH",
        " G",
    ),
    "4x4": (
        "S   ",
        " H H",
        "   H",
        "H  G",
    ),
}
"""Built-in maps, one string per row (top row first)."""

CELL_TYPES = "S HFGW"
TERMINAL_CELLS = "HG"
REWARDS: dict[str, dict[str, float]] = {
    "sparse": {"S": -1.0, " ": -1.0, "F": -3.0, "H": -5.0, "G": 1.0},
    "rich": {"S": -1.0, " ": -1.0, "F": -10.0, "H": -10.0, "G": 50.0},
}
"""Reward for the cell an action leads to (also when the agent stays where it is)."""

ACTIONS = ("up", "right", "down", "left")
_MOVES = np.array([(-1, 0), (0, 1), (1, 0), (0, -1)])  # (row, col) offsets, indexed by action
STATE_REPRESENTATIONS = ("discrete", "xy")


class GridWorld(Environment):
    """A grid of cells that an agent walks through, deterministically.

    Cells (map characters): ``S`` start, ``" "`` free, ``W`` wall (blocks moves), ``F`` fire
    (passable but costly), ``H`` hole and ``G`` goal (both end the episode: ``terminated``).

    Actions (``IntBox(4)``, ``action_type="udlr"``): 0 up, 1 right, 2 down, 3 left. A move off the
    map or into a wall leaves the agent where it is; so does any move out of a hole or the goal.

    States: ``"discrete"`` gives the cell index ``col * n_rows + row`` (0 is the top-left cell, 1 the
    cell below it, ...), in ``IntBox(n_rows * n_cols)``; ``"xy"`` gives ``(col, row)``.

    Rewards, for the cell an action leads to: ``reward_function="sparse"``: start/free -1, fire -3,
    hole -5, goal +1; ``"rich"``: start/free -1, fire -10, hole -10, goal +50.

    With ``action_masking=True``, moves off the map or into a wall are illegal: states are
    ``Dict(observations=<the state above>, action_mask=BoolBox(shape=(4,)))``, the mask true for the legal
    moves (all four in a hole or the goal), and an illegal move raises a ``ValueError``. An agent that
    honours action masks never makes one (see :mod:`rlgraph.spaces.masks`).

    Maps (``world``; or pass your own rows): ``"2x2"`` is ``["SH", " G"]`` (states: 0 start, 1 below it,
    2 hole, 3 goal); ``"4x4"`` is ``["S   ", " H H", "   H", "H  G"]`` (holes at states 3, 5, 13, 14,
    goal 15). ``save_mode=True`` turns holes into fire.
    """

    def __init__(
        self,
        world: str | Sequence[str] = "4x4",
        save_mode: bool = False,
        action_type: str = "udlr",
        reward_function: str = "sparse",
        state_representation: str = "discrete",
        action_masking: bool = False,
    ) -> None:
        rows = _map_rows(world, save_mode)
        _check_choice("action_type", action_type, ("udlr",))
        _check_choice("reward_function", reward_function, tuple(REWARDS))
        _check_choice("state_representation", state_representation, STATE_REPRESENTATIONS)
        self.world = rows
        self.n_rows, self.n_cols = len(rows), len(rows[0])
        self.reward_function = reward_function
        self.state_representation = state_representation
        self._next_cell, self._rewards, self._terminals = self._transition_tables()
        self._states = self._state_table()
        self.start_cell = self._cell_index(*_find_start(rows))
        self.cell = self.start_cell  # the agent's cell (discrete index); set it to start elsewhere
        if state_representation == "discrete":
            self.state_space = IntBox(self.n_rows * self.n_cols)
        else:
            self.state_space = IntBox(low=0, high=(self.n_cols, self.n_rows), shape=(2,))
        self.action_space = IntBox(len(ACTIONS))
        self.action_masking = bool(action_masking)
        self._legal = self._legal_moves()
        if self.action_masking:
            self.state_space = Dict(observations=self.state_space, action_mask=BoolBox(shape=(len(ACTIONS),)))

    def reset(self, seed: int | None = None) -> Any:
        self.cell = self.start_cell
        return self._state(self.cell)

    def step(self, action: Any) -> StepResult:
        cell = self.cell
        if self.action_masking and not self._legal[cell, action]:
            row, col = self._cell_position(cell)
            raise ValueError(
                f"action {int(action)} ({ACTIONS[int(action)]}) is illegal at row {row}, column {col}: its "
                f"{ACTION_MASK!r} allows {[ACTIONS[a] for a in np.flatnonzero(self._legal[cell])]}"
            )
        self.cell = int(self._next_cell[cell, action])
        return (
            self._state(self.cell),
            float(self._rewards[cell, action]),
            bool(self._terminals[cell, action]),
            False,
            {},
        )

    def _state(self, cell: int) -> Any:
        state = self._states[cell]
        return {"observations": state, ACTION_MASK: self._legal[cell]} if self.action_masking else state

    def _legal_moves(self) -> np.ndarray:
        """Per (cell, action): whether the move is legal (it moves the agent, or the cell ends episodes)."""
        cells = np.arange(self.n_rows * self.n_cols)
        ending = np.array([self.cell_type(cell) in TERMINAL_CELLS for cell in range(cells.size)])
        legal = (self._next_cell != cells[:, None]) | ending[:, None]
        legal.setflags(write=False)
        return legal

    def render(self) -> str:
        """The map as text, ``X`` marking the agent."""
        row, col = self._cell_position(self.cell)
        lines = [
            line if r != row else line[:col] + "X" + line[col + 1 :] for r, line in enumerate(self.world)
        ]
        return "\n".join(lines) + "\n"

    def cell_type(self, cell: int) -> str:
        """The map character of the cell with discrete index ``cell``."""
        row, col = self._cell_position(cell)
        return self.world[row][col]

    def _cell_index(self, row: int, col: int) -> int:
        return col * self.n_rows + row

    def _cell_position(self, cell: int) -> tuple[int, int]:
        col, row = divmod(cell, self.n_rows)
        return row, col

    def _transition_tables(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Next cell, reward and terminal flag for every (cell, action)."""
        num_cells = self.n_rows * self.n_cols
        next_cell = np.empty((num_cells, len(ACTIONS)), np.int64)
        for cell in range(num_cells):
            row, col = self._cell_position(cell)
            for action, (d_row, d_col) in enumerate(_MOVES):
                to_row, to_col = row + d_row, col + d_col
                blocked = (
                    self.world[row][col] in TERMINAL_CELLS
                    or not (0 <= to_row < self.n_rows and 0 <= to_col < self.n_cols)
                    or self.world[to_row][to_col] == "W"
                )
                next_cell[cell, action] = cell if blocked else self._cell_index(to_row, to_col)
        types = np.array([self.cell_type(cell) for cell in range(num_cells)])[next_cell]
        reward_of = REWARDS[self.reward_function]  # wall cells are never entered: no reward
        rewards = np.array([[reward_of.get(cell_type, 0.0) for cell_type in row] for row in types])
        return next_cell, rewards, np.isin(types, list(TERMINAL_CELLS))

    def _state_table(self) -> np.ndarray:
        cells = np.arange(self.n_rows * self.n_cols, dtype=np.int32)
        if self.state_representation == "discrete":
            return cells
        table = np.stack([cells // self.n_rows, cells % self.n_rows], axis=1)  # (col, row)
        table.setflags(write=False)
        return table

    def __repr__(self) -> str:
        return f"GridWorld(world={list(self.world)!r}, reward_function={self.reward_function!r})"


def _map_rows(world: str | Sequence[str], save_mode: bool) -> tuple[str, ...]:
    if isinstance(world, str):
        if world not in MAPS:
            raise SpecError(f"unknown grid world map {world!r}" + suggestion_text(world, MAPS), "world")
        rows = MAPS[world]
    else:
        rows = tuple(world)
    if not rows or len({len(row) for row in rows}) != 1 or not rows[0]:
        raise SpecError(f"a grid world map needs rows of one equal, non-zero length, got {rows!r}", "world")
    unknown = set("".join(rows)) - set(CELL_TYPES)
    if unknown:
        raise SpecError(f"unknown map characters {sorted(unknown)}; known are {CELL_TYPES!r}", "world")
    if "".join(rows).count("S") != 1:
        raise SpecError("a grid world map needs exactly one start cell 'S'", "world")
    return tuple(row.replace("H", "F") for row in rows) if save_mode else rows


def _find_start(rows: tuple[str, ...]) -> tuple[int, int]:
    row = next(r for r, line in enumerate(rows) if "S" in line)
    return row, rows[row].index("S")


def _check_choice(key: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise SpecError(f"{value!r} is not one of {list(choices)}" + suggestion_text(value, choices), key)
