#!/usr/bin/env bash
# Issue 32's checks on a machine with a GPU (not CI): run from the repository root in the dev venv, with
# `bash benchmarks/accelerator_checks.sh` (about 10 minutes; results under ${OUT:-/tmp/accelerator}).
#   1. the learner on CUDA, on each installed backend: DQN's learner role placed with device_map {"": gpu},
#      where its variables live, and 2,000 steps of training;
#   2. a learner group on torch and on jax with NCCL where the machine has 2 GPUs or more (each learner its
#      own; jax's learners are processes of their own, learner 0 too);
#   3. Ape-X on Pong (examples/apex_pong.yaml) for what is left of the time: its curve and frames/s.
# Prepared in advance: not yet run on a GPU (no device was lent when it was written).
set -u
OUT=${OUT:-/tmp/accelerator}
mkdir -p "$OUT"
nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1

for backend in torch tf jax; do
  python - "$backend" > "$OUT/learner-$backend.txt" 2>&1 <<'EOF'
import sys, time
from rlgraph.agents import Agent
from rlgraph.training import load_run_spec
from rlgraph.training.trainer import make_executor

backend = sys.argv[1]
spec = load_run_spec("examples/dqn_cartpole.yaml", ['agent.execution_spec={device_map: {"": gpu}}'],
                     {"backend": backend, "seed": 1, "timesteps": 2000, "eval_episodes": 0})
executor = make_executor(spec)
graph = executor.agent._built_executor()
print(backend, {name: str(getattr(v, "device", getattr(v, "devices", lambda: "?")))
                for name, v in list(graph.variables().items())[:3]})
start = time.perf_counter()
executor.execute_workload({"num_timesteps": 2000})
print(backend, "2,000 steps with updates in", round(time.perf_counter() - start, 1), "s; loss", executor.agent.last_loss)
EOF
done

for backend in torch jax; do
  python - "$backend" > "$OUT/learner-group-nccl-$backend.txt" 2>&1 <<'EOF'
import sys
import torch
from rlgraph.agents.learner_group import LearnerGroup
from rlgraph.training import load_run_spec
from rlgraph.training.trainer import make_executor

count = torch.cuda.device_count()
print("GPUs", count)
if count >= 2:
    spec = load_run_spec("examples/ppo_cartpole.yaml", ['agent.execution_spec={device_map: {"": "cuda:0"}}'],
                         {"backend": sys.argv[1], "seed": 1})
    executor = make_executor(spec)
    group = LearnerGroup(executor.agent, 2, device_of=lambda rank: f"cuda:{rank}")
    executor.execute_workload({"num_timesteps": 4096})
    print("updates", executor.agent.updates, "loss", executor.agent.last_loss)
    group.close()
else:
    print("NCCL needs a GPU per learner: one GPU here, so no group of two")
EOF
done

timeout 300 rlgraph train examples/apex_pong.yaml --run-dir "$OUT/apex-pong" --quiet > "$OUT/apex-pong.txt" 2>&1
rlgraph plot "$OUT/apex-pong" --out "$OUT/apex-pong.png" >> "$OUT/apex-pong.txt" 2>&1
tail -n 3 "$OUT"/*.txt
