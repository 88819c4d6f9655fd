"""A hand-written PPO in the style of PureJaxRL, in one file: the reference of ``bench_compiled.py``.

Everything is one ``jax.jit`` program, in float32 (also where 64-bit JAX is on, as in the benchmark's process): gymnax's environments (stepped with their own auto-reset), acting,
GAE and the minibatch epochs, ``jax.vmap``-ed over seeds for a population. It takes its hyperparameters from
the run spec RLgraph trains (``examples/ppo_gymnax_cartpole.yaml``: 8 environments, rollouts of 32 steps,
10 gradient steps on minibatches of 128, Adam with the gradient norm clipped, separate 64x64 tanh policy and
value networks, standardized advantages), so that both do the same work per step.

Run alone: ``python benchmarks/purejaxrl_ppo.py --members 8 --timesteps 100000`` prints steps per second
(compiling apart) and each member's mean return over its last 100 episodes.
"""

from __future__ import annotations

import argparse
import itertools
import time
from pathlib import Path
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax
import yaml

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "ppo_gymnax_cartpole.yaml"


class Settings(NamedTuple):
    env_id: str
    num_envs: int
    rollout: int
    iterations: int
    minibatch: int
    discount: float
    gae_lambda: float
    clip: float
    entropy: float
    value_weight: float
    learning_rate: float
    max_grad_norm: float
    hidden: int


def settings_of(spec_file: Path = EXAMPLE) -> Settings:
    """The run spec's hyperparameters (its PPO agent's keys)."""
    spec = yaml.safe_load(spec_file.read_text())
    agent, update = spec["agent"], spec["agent"]["update_spec"]
    envs = spec["num_environments"]
    return Settings(
        env_id=spec["environment"]["env_id"],
        num_envs=envs,
        rollout=update["batch_size"] // envs,
        iterations=update["num_iterations"],
        minibatch=update["sample_size"],
        discount=agent["discount"],
        gae_lambda=agent["gae_lambda"],
        clip=agent["clip_ratio"],
        entropy=agent["weight_entropy"],
        value_weight=agent.get("weight_vf", 0.5),
        learning_rate=agent["optimizer_spec"]["learning_rate"],
        max_grad_norm=agent["optimizer_spec"]["clip_grad_norm"],
        hidden=agent["network_spec"][0]["units"],
    )


# -- networks: two MLPs of tanh layers ------------------------------------------------------------------------------
def mlp_init(key: Any, sizes: list[int]) -> list[tuple[Any, Any]]:
    layers = []
    for layer_key, (n_in, n_out) in zip(jax.random.split(key, len(sizes) - 1), itertools.pairwise(sizes)):
        limit = float(np.sqrt(6.0 / (n_in + n_out)))
        weight = jax.random.uniform(layer_key, (n_in, n_out), jnp.float32, minval=-limit, maxval=limit)
        layers.append((weight, jnp.zeros(n_out, jnp.float32)))
    return layers


def mlp(layers: list[tuple[Any, Any]], x: Any) -> Any:
    for weight, bias in layers[:-1]:
        x = jnp.tanh(x @ weight + bias)
    weight, bias = layers[-1]
    return x @ weight + bias


class Transition(NamedTuple):
    observation: Any
    action: Any
    log_prob: Any
    value: Any
    reward: Any
    done: Any
    episode_return: Any


def make_train(settings: Settings, timesteps: int) -> Any:
    """``train(key)``: PPO for ``timesteps`` steps from one seed's key; the returns of the episodes that ended
    (masked: ``(updates, rollout, envs)`` returns and where they ended)."""
    import gymnax

    env, params = gymnax.make(settings.env_id)
    observations = env.observation_space(params).shape[0]
    actions = env.action_space(params).n
    s = settings
    batch = s.num_envs * s.rollout
    updates = timesteps // batch
    optimizer = optax.chain(optax.clip_by_global_norm(s.max_grad_norm), optax.adam(s.learning_rate))

    def policy(weights: Any, x: Any) -> tuple[Any, Any]:
        return mlp(weights["policy"], x), mlp(weights["value"], x)[..., 0]

    def env_step(runner: Any, _: Any) -> tuple[Any, Transition]:
        weights, opt_state, env_state, obs, returns, key = runner
        key, act_key, step_key = jax.random.split(key, 3)
        logits, value = policy(weights, obs)
        action = jax.random.categorical(act_key, logits)
        log_prob = jax.nn.log_softmax(logits)[jnp.arange(s.num_envs), action]
        next_obs, env_state, reward, terminated, truncated, _ = jax.vmap(env.step, in_axes=(0, 0, 0, None))(
            jax.random.split(step_key, s.num_envs), env_state, action, params
        )
        done = terminated | truncated
        returns = returns + reward
        transition = Transition(obs, action, log_prob, value, reward, done, returns)
        returns = jnp.where(done, 0.0, returns)
        return (weights, opt_state, env_state, next_obs, returns, key), transition

    def loss(weights: Any, rows: Transition, advantages: Any, targets: Any) -> Any:
        logits, value = policy(weights, rows.observation)
        log_probs = jax.nn.log_softmax(logits)
        new_log_prob = log_probs[jnp.arange(len(rows.action)), rows.action]
        ratio = jnp.exp(new_log_prob - rows.log_prob)
        surrogate = jnp.minimum(ratio * advantages, jnp.clip(ratio, 1 - s.clip, 1 + s.clip) * advantages)
        entropy = -(jnp.exp(log_probs) * log_probs).sum(-1).mean()
        value_loss = 0.5 * ((value - targets) ** 2).mean()
        return -surrogate.mean() + s.value_weight * value_loss - s.entropy * entropy

    def update(runner: Any, _: Any) -> tuple[Any, Any]:
        runner, rollout = jax.lax.scan(env_step, runner, None, length=s.rollout)
        weights, opt_state, env_state, obs, returns, key = runner
        _, last_value = policy(weights, obs)

        def gae(carry: Any, step: Transition) -> tuple[Any, Any]:
            advantage, next_value = carry
            alive = 1.0 - step.done.astype(jnp.float32)
            delta = step.reward + s.discount * next_value * alive - step.value
            advantage = delta + s.discount * s.gae_lambda * alive * advantage
            return (advantage, step.value), advantage

        _, advantages = jax.lax.scan(gae, (jnp.zeros_like(last_value), last_value), rollout, reverse=True)
        targets = advantages + rollout.value
        advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
        flat = jax.tree_util.tree_map(
            lambda x: x.reshape(batch, *x.shape[2:]), (rollout, advantages, targets)
        )
        key, order_key = jax.random.split(key)
        passes = -(-s.iterations * s.minibatch // batch)
        orders = jax.vmap(lambda k: jax.random.permutation(k, batch))(jax.random.split(order_key, passes))
        rows = orders.reshape(-1)[: s.iterations * s.minibatch].reshape(s.iterations, s.minibatch)

        def gradient_step(state: Any, indices: Any) -> tuple[Any, Any]:
            weights, opt_state = state
            minibatch = jax.tree_util.tree_map(lambda x: x[indices], flat)
            value, grads = jax.value_and_grad(loss)(weights, *minibatch)
            changes, opt_state = optimizer.update(grads, opt_state)
            return (optax.apply_updates(weights, changes), opt_state), value

        (weights, opt_state), _ = jax.lax.scan(gradient_step, (weights, opt_state), rows)
        runner = (weights, opt_state, env_state, obs, returns, key)
        return runner, (rollout.episode_return, rollout.done)

    def train(key: Any) -> Any:
        key, policy_key, value_key, reset_key = jax.random.split(key, 4)
        weights = {
            "policy": mlp_init(policy_key, [observations, s.hidden, s.hidden, actions]),
            "value": mlp_init(value_key, [observations, s.hidden, s.hidden, 1]),
        }
        obs, env_state = jax.vmap(env.reset, in_axes=(0, None))(
            jax.random.split(reset_key, s.num_envs), params
        )
        runner = (weights, optimizer.init(weights), env_state, obs, jnp.zeros(s.num_envs, jnp.float32), key)
        _, episodes = jax.lax.scan(update, runner, None, length=updates)
        return episodes

    return train


def run(members: int, timesteps: int, settings: Settings | None = None, seed: int = 0) -> dict[str, Any]:
    """Train ``members`` seeds at once; steps per second (every member's) with compiling apart."""
    settings = settings or settings_of()
    train = jax.jit(jax.vmap(make_train(settings, timesteps)))
    keys = jax.random.split(jax.random.PRNGKey(seed), members)
    start = time.perf_counter()
    compiled = train.lower(keys).compile()
    compile_seconds = time.perf_counter() - start
    start = time.perf_counter()
    returns, ended = jax.block_until_ready(compiled(keys))
    seconds = time.perf_counter() - start
    steps = (timesteps // (settings.num_envs * settings.rollout)) * settings.num_envs * settings.rollout
    returns, ended = np.asarray(returns), np.asarray(ended)
    last = [float(returns[m][ended[m]][-100:].mean()) for m in range(members)]
    return {
        "steps_per_second": steps * members / seconds,
        "seconds": seconds,
        "compile_seconds": compile_seconds,
        "last_returns": last,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--members", type=int, default=1)
    parser.add_argument("--timesteps", type=int, default=100_000)
    args = parser.parse_args()
    result = run(args.members, args.timesteps)
    print(
        f"{args.members} member(s): {result['steps_per_second']:,.0f} steps/s, {result['seconds']:.1f} s "
        f"({result['compile_seconds']:.1f} s compiling apart); mean return of the last 100 episodes: "
        f"{', '.join(f'{r:.0f}' for r in result['last_returns'])}"
    )


if __name__ == "__main__":
    main()
