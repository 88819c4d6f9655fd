"""R2D2's replay sequences against a reference written from whole recorded episodes: sequences never mix
episodes (what lies outside one is padding, masked out), overlap as the period says, carry the actor's
recurrent state from their first slot, and hold the n-step returns and bootstrap offsets of their steps."""

from __future__ import annotations

import numpy as np
import pytest

from rlgraph_algos.r2d2.sequences import SequenceBuffer

UNITS = 2


def state_of(env: int, episode: int, step: int) -> np.ndarray:
    """A state naming its environment, episode and step (step + 1: zeros are padding)."""
    return np.float32([env, episode, step + 1])


def final_state_of(env: int, episode: int) -> np.ndarray:
    return np.float32([env, episode, -1])


def internals_of(env: int, episode: int, step: int) -> tuple:
    h = np.full(UNITS, 100 * env + 10 * episode + step + 1, np.float32)
    return ((h, -h),)


def simulate(buffer: SequenceBuffer, lengths: dict[int, list[int]], terminal: dict, seed: int):
    """Step every environment's episodes (lengths per env) in a random interleaving; returns the emitted
    sequences (batch-major, concatenated) and each episode's rewards."""
    rng = np.random.default_rng(seed)
    position = {env: [0, 0] for env in lengths}  # episode, step
    rewards = {
        (env, ep): rng.normal(size=n).astype(np.float32)
        for env in lengths
        for ep, n in enumerate(lengths[env])
    }
    out = []
    while True:
        running = [env for env in lengths if position[env][0] < len(lengths[env])]
        if not running:
            break
        envs = sorted(rng.choice(running, size=rng.integers(1, len(running) + 1), replace=False).tolist())
        rows = []
        for env in envs:
            ep, step = position[env]
            last = step == lengths[env][ep] - 1
            next_state = final_state_of(env, ep) if last else state_of(env, ep, step + 1)
            rows.append((env, ep, step, last, next_state))
            position[env] = [ep + 1, 0] if last else [ep, step + 1]
        ended = np.array([r[3] for r in rows])
        fields = {
            "states": np.stack([state_of(e, ep, s) for e, ep, s, _, _ in rows]),
            "actions": np.array([10 * s + 1 for _, _, s, _, _ in rows], np.int64),
            "rewards": np.array([rewards[(e, ep)][s] for e, ep, s, _, _ in rows], np.float32),
            "terminals": np.array([last and terminal[(e, ep)] for e, ep, _, last, _ in rows]),
            "next_states": np.stack([r[4] for r in rows]),
            "internals": tuple(
                tuple(np.stack(leaf) for leaf in zip(*parts, strict=True))
                for parts in zip(*[internals_of(e, ep, s) for e, ep, s, _, _ in rows], strict=True)
            ),
        }
        emitted = buffer.add(envs, fields, ended)
        if emitted is not None:
            out.append(emitted)
    merged = {key: np.concatenate([part[key] for part in out]) for key in out[0] if key != "internals"}
    merged["internals"] = tuple(
        tuple(np.concatenate(leaf) for leaf in zip(*layers, strict=True))
        for layers in zip(*[part["internals"] for part in out], strict=True)
    )
    return merged, rewards


def reference_sequence(env, ep, start, length, burn_in, n_step, discount, episode_length, rewards, terminal):
    """The sequence learning from step ``start`` of an episode, written out slot by slot."""
    last = min(start + length, episode_length) - 1
    slots = burn_in + length
    states = np.zeros((slots + 1, 3), np.float32)
    resets = np.zeros(slots + 1, bool)
    for j in range(slots):
        step = start - burn_in + j
        if 0 <= step <= last:
            states[j] = state_of(env, ep, step)
            resets[j] = step == 0
    after = last - start + burn_in + 1
    states[after] = final_state_of(env, ep) if last == episode_length - 1 else state_of(env, ep, last + 1)
    first = start - burn_in
    h = internals_of(env, ep, first)[0][0] if first >= 0 else np.zeros(UNITS, np.float32)
    valid = np.array([start + t <= last for t in range(length)])
    actions = np.array([10 * (start + t) + 1 if valid[t] else 0 for t in range(length)])
    returns, offsets, discounts = (np.zeros(length) for _ in range(3))
    for t in range(length):
        step = start + t
        if step > last:
            continue
        m = min(n_step, last + 1 - step)
        returns[t] = sum(discount**k * rewards[step + k] for k in range(m))
        offsets[t] = m
        ends_episode = terminal and step + m - 1 == episode_length - 1
        discounts[t] = 0.0 if ends_episode else discount**m
    return {
        "states": states,
        "resets": resets,
        "h": h,
        "valid": valid,
        "actions": actions,
        "returns": returns,
        "bootstrap_steps": offsets,
        "bootstrap_discounts": discounts,
    }


@pytest.mark.parametrize(
    ("length", "burn_in", "period", "n_step"),
    [(4, 2, 4, 3), (5, 3, 2, 2), (3, 0, 1, 1), (6, 4, 3, 5)],
)
def test_sequences_match_the_reference_and_never_cross_an_episode_boundary(length, burn_in, period, n_step):
    discount = 0.9
    buffer = SequenceBuffer(length, burn_in, period, n_step, discount)
    rng = np.random.default_rng(length + burn_in)
    lengths = {env: rng.integers(1, 14, size=4).tolist() for env in range(3)}
    terminal = {(env, ep): bool(rng.integers(2)) for env in lengths for ep in range(4)}
    sequences, rewards = simulate(buffer, lengths, terminal, seed=period)

    expected = {
        (env, ep, start)
        for env in lengths
        for ep, n in enumerate(lengths[env])
        for start in range(0, n, period)
    }
    found = {}
    for index, first_learned in enumerate(sequences["states"][:, burn_in]):
        env, ep, step = (int(v) for v in first_learned)
        key = (env, ep, step - 1)
        assert key not in found, f"sequence {key} emitted twice"
        found[key] = index
    assert found.keys() == expected

    for (env, ep, start), index in found.items():
        ref = reference_sequence(
            env,
            ep,
            start,
            length,
            burn_in,
            n_step,
            discount,
            lengths[env][ep],
            rewards[(env, ep)],
            terminal[(env, ep)],
        )
        states = sequences["states"][index]
        held = states.any(axis=1)
        # Every state held belongs to this episode: nothing crosses its start or end unmasked.
        assert (states[held, 0] == env).all() and (states[held, 1] == ep).all()
        np.testing.assert_array_equal(states, ref["states"])
        np.testing.assert_array_equal(sequences["resets"][index], ref["resets"])
        np.testing.assert_array_equal(sequences["valid"][index], ref["valid"])
        np.testing.assert_array_equal(sequences["actions"][index], ref["actions"])
        np.testing.assert_array_equal(sequences["internals"][0][0][index], ref["h"])
        np.testing.assert_allclose(sequences["returns"][index], ref["returns"], rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(sequences["bootstrap_steps"][index], ref["bootstrap_steps"])
        np.testing.assert_allclose(
            sequences["bootstrap_discounts"][index], ref["bootstrap_discounts"], rtol=1e-6
        )
    assert len(buffer) == 0, "every episode ended: no sequence stays open"


def test_every_step_is_learned_once_per_overlapping_sequence_that_covers_it():
    buffer = SequenceBuffer(length=4, burn_in=0, period=2, n_step=1, discount=1.0)
    sequences, _ = simulate(buffer, {0: [9]}, {(0, 0): True}, seed=0)
    learned = sequences["states"][:, :4, 2][sequences["valid"]] - 1
    counts = np.bincount(learned.astype(int), minlength=9)
    # Starts 0, 2, 4, 6, 8: steps 0-1 in one sequence, every later one in two (6-8, the shorter 8-8 too).
    np.testing.assert_array_equal(counts, [1, 1, 2, 2, 2, 2, 2, 2, 2])
    assert len(sequences["valid"]) == 5


def test_an_environment_twice_in_one_call_keeps_its_steps_in_order():
    buffer = SequenceBuffer(length=2, burn_in=1, period=2, n_step=1, discount=0.5)

    def fields(steps, rewards, terminals):
        internals = ((np.zeros((len(steps), UNITS), np.float32),) * 2,)
        return {
            "states": np.stack([state_of(0, 0, s) for s in steps]),
            "actions": np.asarray(steps, np.int64),
            "rewards": np.float32(rewards),
            "terminals": np.asarray(terminals),
            "next_states": np.stack([state_of(0, 0, s + 1) for s in steps]),
            "internals": internals,
        }

    out = buffer.add(
        ["a", "a", "a"], fields([0, 1, 2], [1.0, 2.0, 4.0], [False, False, True]), np.array([0, 0, 1], bool)
    )
    np.testing.assert_array_equal(out["states"][:, 1, 2], [1, 3])  # sequences from steps 0 and 2
    np.testing.assert_array_equal(out["states"][1, 0, 2], 2)  # the second one's burn-in: step 1
    np.testing.assert_allclose(out["returns"], [[1.0, 2.0], [4.0, 0.0]])
    np.testing.assert_allclose(out["bootstrap_discounts"], [[0.5, 0.5], [0.0, 0.0]])


def test_reset_drops_open_sequences():
    buffer = SequenceBuffer(length=4, burn_in=0, period=4, n_step=1, discount=0.9)
    simulate(buffer, {0: [9], 1: [3]}, {(0, 0): False, (1, 0): True}, seed=1)
    assert len(buffer) == 0
    with pytest.raises(ValueError, match="period"):
        SequenceBuffer(length=4, burn_in=0, period=5, n_step=1, discount=0.9)
