"""The frame replay against a naive one: every sampled stack equals the stack the ``sequence`` preprocessor
built for that step (frames before an episode's start repeat its first frame), n-step returns are cut at
episode ends, a truncated episode bootstraps from its true final state, and the frames take a quarter of
the naive replay's memory."""

from __future__ import annotations

import numpy as np
import pytest

from rlgraph.errors import BuildError, SpecError
from rlgraph.spaces import BoolBox, Dict, FloatBox, IntBox
from rlgraph_memories.frame_replay import FrameReplay
from rlgraph_memories.replay import ReplayMemory

K, H, W = 4, 3, 2  # frames per state; tiny frames


def frame(env: int, episode: int, step: int) -> np.ndarray:
    """A frame naming its environment, episode and step (step + 1: zeros are never a frame)."""
    pixels = np.zeros((H, W, 1), np.uint8)
    pixels[0, 0], pixels[0, 1], pixels[1, 0] = env + 1, episode + 1, step + 1
    return pixels


def final_frame(env: int, episode: int) -> np.ndarray:
    pixels = frame(env, episode, 0)
    pixels[1, 0] = 250
    return pixels


def naive_stack(frames: list[np.ndarray]) -> np.ndarray:
    """The last K frames of an episode so far, the first repeated to fill: the sequence preprocessor's."""
    padded = [frames[0]] * max(0, K - len(frames)) + frames[-K:]
    return np.concatenate(padded, axis=-1)


def play(lengths: dict[int, list[int]], truncated: dict, seed: int):
    """Steps of several environments' episodes, interleaved as a vector environment steps them (every
    environment each step, in order, restarting at once): the one-step records and, per (env, step index),
    what a naive replay would hold."""
    rng = np.random.default_rng(seed)
    records, naive = [], {}
    position = {env: [0, 0, []] for env in lengths}  # episode, step, frames so far
    steps_done = {env: 0 for env in lengths}
    while any(position[env][0] < len(lengths[env]) for env in lengths):
        for env, episodes in lengths.items():
            episode, step, frames = position[env]
            if episode >= len(episodes):
                continue
            frames = [*frames, frame(env, episode, step)]
            last = step == episodes[episode] - 1
            next_frame = final_frame(env, episode) if last else frame(env, episode, step + 1)
            state, next_state = naive_stack(frames), naive_stack([*frames, next_frame])
            cut = last and truncated[(env, episode)]
            row = {
                "states": state,
                "actions": np.int64(rng.integers(3)),
                "rewards": np.float32(rng.normal()),
                "terminals": bool(last and not cut),
                "truncateds": bool(cut),
                "next_states": next_state,
                "env_indices": np.int64(env),
            }
            records.append(row)
            naive[(env, steps_done[env])] = row
            steps_done[env] += 1
            position[env] = [episode + 1, 0, []] if last else [episode, step + 1, frames]
    return records, naive


def memory_test(component_test, capacity, envs, n_step, discount=0.9):
    records = Dict(
        states=IntBox(256, shape=(H, W, K), dtype="uint8"),
        actions=IntBox(3),
        rewards=FloatBox(),
        terminals=BoolBox(),
        truncateds=BoolBox(),
        next_states=IntBox(256, shape=(H, W, K), dtype="uint8"),
        env_indices=IntBox(envs),
        add_batch_rank=True,
    )
    memory = FrameReplay(
        capacity, num_environments=envs, frames_per_state=K, n_step=n_step, discount=discount
    )
    return component_test(memory, input_spaces={"records": records}, seed=2)


def batch(rows):
    return {key: np.stack([row[key] for row in rows]) for key in rows[0]}


def expected_transition(naive, env, t, n_step, discount):
    """The n-step transition from step t of env, from the naive records."""
    total, length, terminal = 0.0, 0, False
    for j in range(n_step):
        row = naive[(env, t + j)]
        total += discount**j * float(row["rewards"])
        length += 1
        if row["terminals"] or row["truncateds"]:
            terminal = bool(row["terminals"])
            break
    last = naive[(env, t + length - 1)]
    return naive[(env, t)]["states"], total, length, terminal, last["next_states"]


@pytest.mark.parametrize("n_step", [1, 3])
def test_sampled_transitions_equal_the_naive_replay_s(component_test, n_step):
    envs, discount = 3, 0.9
    lengths = {0: [2, 7, 5], 1: [9, 1, 4], 2: [6, 6]}
    truncated = {(env, ep): (env + ep) % 2 == 1 for env in lengths for ep in range(3)}
    records, naive = play(lengths, truncated, seed=n_step)
    test = memory_test(component_test, 1000, envs, n_step, discount)
    for start in range(0, len(records), 5):  # batches that hold an environment more than once
        test.test(("insert_records", batch(records[start : start + 5])))
    sample = test.test(("get_records", 200))
    counts = {env: sum(lengths[env]) for env in lengths}
    seen = set()
    for index, row in enumerate(sample["indices"]):
        env, t = int(row % envs), int(row // envs)
        assert t + n_step - 1 < counts[env], "the window of a sampled step is held"
        state, total, length, terminal, next_state = expected_transition(naive, env, t, n_step, discount)
        got = {key: value[index] for key, value in sample["records"].items()}
        np.testing.assert_array_equal(got["states"], state)
        np.testing.assert_array_equal(got["next_states"], next_state)
        np.testing.assert_allclose(got["rewards"], total, rtol=1e-5)
        np.testing.assert_allclose(got["discounts"], discount**length, rtol=1e-6)
        assert bool(got["terminals"]) == terminal
        assert got["actions"] == naive[(env, t)]["actions"]
        seen.add((env, t))
    assert len(seen) > 20  # draws spread over the steps


def test_after_the_ring_wraps_stacks_only_hold_frames_still_there(component_test):
    envs = 2
    records, _ = play({0: [30], 1: [12, 20]}, {(0, 0): False, (1, 0): True, (1, 1): False}, seed=0)
    test = memory_test(component_test, 20, envs, 2)  # 10 steps per environment
    test.test(("insert_records", batch(records)))
    assert test.test("get_size") == 20
    sample = test.test(("get_records", 100))
    for state, next_state in zip(sample["records"]["states"], sample["records"]["next_states"]):
        steps = state[1, 0, :].astype(int)  # the step of each frame (+1)
        env, episode = state[0, 0, 0], state[0, 1, 0]
        assert (state[0, 0, :] == env).all() and (state[0, 1, :] == episode).all(), "one episode per stack"
        assert (np.diff(steps) >= 0).all() and (np.diff(steps) <= 1).all(), "consecutive (or repeated first)"
        assert (next_state[0, 0, :] == env).all()


def test_frames_take_a_quarter_of_the_naive_replay_s_memory(component_test):
    """Per step it keeps two frames (the state's newest and the next state's) where a replay of whole states
    keeps the two stacks of four: the built memories' variables, 84x84 uint8 Atari frames."""
    frames = IntBox(256, shape=(84, 84, 4), dtype="uint8")
    steps = Dict(
        states=frames,
        actions=IntBox(6),
        rewards=FloatBox(),
        terminals=BoolBox(),
        truncateds=BoolBox(),
        next_states=frames,
        env_indices=IntBox(2),
        add_batch_rank=True,
    )
    capacity = 1000

    def stored_bytes(memory):
        test = component_test(memory, input_spaces={"records": steps})
        return sum(np.asarray(value).nbytes for value in test.variable_values().values())

    frame_bytes = stored_bytes(FrameReplay(capacity, num_environments=2, frames_per_state=4))
    naive_bytes = stored_bytes(ReplayMemory(capacity))
    assert naive_bytes / frame_bytes > 3.9, (naive_bytes, frame_bytes)


def test_bad_settings_and_records_are_named(component_test):
    with pytest.raises(SpecError) as caught:
        FrameReplay(capacity=8, num_environments=2, frames_per_state=4, n_step=3)
    assert caught.value.path == "capacity"
    records = Dict(states=FloatBox(shape=(2, 2, 3)), actions=IntBox(2), add_batch_rank=True)
    with pytest.raises(BuildError, match="one-step records"):
        component_test(FrameReplay(100), input_spaces={"records": records})
