"""Ray starts embedded with this machine's CPUs; a cluster address that does not answer, a malformed one
and a worker count the cluster cannot host are clear errors."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rlgraph.errors import SpecError
from rlgraph_ray.cluster import (
    ADDRESS_VARIABLE,
    ClusterError,
    check_capacity,
    connect,
    cpus_for,
    worker_cpus,
)

APEX_EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "apex_cartpole.yaml"


def closed_port() -> int:
    """A local port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_connect_starts_an_embedded_cluster_with_this_machines_cpus_once():
    import ray

    resources = connect()
    assert ray.is_initialized()
    assert resources["CPU"] == os.cpu_count()
    assert connect() == ray.cluster_resources()  # a second call joins the same cluster


def test_an_address_that_does_not_answer_is_an_error_naming_it_within_the_timeout():
    address = f"127.0.0.1:{closed_port()}"
    start = time.perf_counter()
    with pytest.raises(ClusterError, match=f"no Ray cluster answers at '{address}'"):
        connect(address, timeout=2.0)
    assert time.perf_counter() - start < 5.0


def test_a_refused_connection_says_so_and_how_long_it_took_not_the_timeout():
    address = f"127.0.0.1:{closed_port()}"
    start = time.perf_counter()
    with pytest.raises(ClusterError, match=r"the connection was refused after ([0-9.e-]+) s") as caught:
        connect(address, timeout=15.0)
    took = time.perf_counter() - start
    message = str(caught.value)
    reported = float(re.search(r"refused after ([0-9.e-]+) s", message).group(1))
    assert reported <= took < 5.0 and "waited" not in message and " 15 s" not in message


@pytest.mark.parametrize(
    ("mode", "says"),
    [
        (
            "disabled",
            r"sent no authentication token, as RAY_AUTH_MODE=disabled says.*set RAY_AUTH_MODE=token",
        ),
        ("token", r"sent an authentication token \(as RAY_AUTH_MODE=token says\), from \$RAY_AUTH_TOKEN"),
        (
            "token_path",
            r"sent an authentication token \(as RAY_AUTH_MODE=token says\), from \$RAY_AUTH_TOKEN_PATH \(/",
        ),
        (
            None,
            r"sent no authentication token \(none in RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH or ~/.ray/auth_token\)",
        ),
        ("home_file", r"sent an authentication token \(as one was found\), from ~/.ray/auth_token"),
    ],
)
def test_a_failed_join_says_what_it_sent_to_authenticate_and_what_to_set(
    monkeypatch, request, tmp_path, mode, says
):
    """Where Ray refuses to join, the error says which token this process sent, from where: the user's
    RAY_AUTH_MODE with $RAY_AUTH_TOKEN or $RAY_AUTH_TOKEN_PATH, none at all, or one found in ~/.ray."""
    import ray
    from ray._private.authentication.authentication_token_setup import AuthenticationTokenLoader

    # Ray keeps the token it found (this process's embedded cluster made one): it looks again here, and after.
    loader = AuthenticationTokenLoader.instance()
    loader.reset_cache()
    request.addfinalizer(loader.reset_cache)

    def refuse(**_):  # as Ray 2.60 gives up on a cluster that refuses this driver's token (after ~20 s)
        raise ConnectionError("Failed to connect to Ray cluster at 127.0.0.1:6379")

    monkeypatch.setenv("HOME", str(tmp_path))  # (no token of this machine's in ~/.ray)
    for variable in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH"):
        monkeypatch.delenv(variable, raising=False)
    token_file = tmp_path / "token"
    token_file.write_text("not-the-clusters")
    if mode == "token_path":
        monkeypatch.setenv("RAY_AUTH_MODE", "token")
        monkeypatch.setenv("RAY_AUTH_TOKEN_PATH", str(token_file))
    elif mode == "home_file":
        (tmp_path / ".ray").mkdir()
        (tmp_path / ".ray" / "auth_token").write_text("not-the-clusters")
    elif mode is not None:
        monkeypatch.setenv("RAY_AUTH_MODE", mode)
        monkeypatch.setenv("RAY_AUTH_TOKEN", "not-the-clusters")
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", refuse)
    with socket.create_server(("127.0.0.1", 0)) as listening:  # the address answers: Ray refuses
        address = f"127.0.0.1:{listening.getsockname()[1]}"
        with pytest.raises(
            ClusterError, match=f"cannot join the Ray cluster at '{address}': Ray gave up after .*{says}"
        ):
            connect(address, timeout=2.0)


@pytest.mark.parametrize(
    ("error", "says"),
    [
        (TimeoutError(), r"no answer within 3 s"),
        (socket.gaierror(-2, "Name or service not known"), r"host name 'nowhere' does not resolve \(Name or"),
        (OSError(113, "No route to host"), r"No route to host after [0-9.e-]+ s"),
    ],
)
def test_an_unreachable_address_says_what_happened_to_the_connection(monkeypatch, error, says):
    """A time-out, a name that does not resolve and any other failure each say what happened (a refused
    connection: above, on a real closed port)."""
    from rlgraph_ray import cluster

    def fail(*_, **__):
        raise error

    monkeypatch.setattr(cluster.socket, "create_connection", fail)
    with pytest.raises(ClusterError, match=says):
        connect("nowhere:6379", timeout=3.0)


@pytest.mark.over_budget("Ray itself gives up on such an address after about 20 s")
def test_an_address_that_accepts_connections_but_is_no_ray_cluster_is_an_error_not_a_hang():
    # A fresh process (this one's Ray is up already). Where the network refuses the address, the
    # socket check answers at once; where something accepts it (as this sandbox's network does), Ray
    # itself gives up after about 20 s.
    script = (
        "from rlgraph_ray.cluster import ClusterError, connect\n"
        "try:\n    connect('10.255.255.1:6379', timeout=1.0)\n"
        "except ClusterError as error:\n    print('ClusterError:', error)\n"
    )
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=90, check=False
    )
    assert "ClusterError:" in done.stdout and "10.255.255.1:6379" in done.stdout, done.stdout + done.stderr
    assert time.perf_counter() - start < 60


def test_an_embedded_cluster_starts_without_rays_token_notice():
    script = (
        "import ray\nfrom rlgraph_ray.cluster import connect\nconnect()\nprint('started')\nray.shutdown()\n"
    )
    env = {key: value for key, value in os.environ.items() if key != "RAY_AUTH_MODE"}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False, env=env
    )
    assert "started" in done.stdout, done.stdout + done.stderr
    assert "Token authentication" not in done.stdout + done.stderr


def test_the_environment_variable_names_the_cluster(monkeypatch):
    address = f"127.0.0.1:{closed_port()}"
    monkeypatch.setenv(ADDRESS_VARIABLE, address)
    with pytest.raises(ClusterError, match=f"'{address}'.*{ADDRESS_VARIABLE}"):
        connect(timeout=1.0)


def test_a_malformed_address_is_a_spec_error():
    with pytest.raises(SpecError, match="ray_address: a Ray cluster address is host:port"):
        connect("no-port-here")


def test_more_workers_than_the_cluster_hosts_is_an_error_naming_num_workers():
    with pytest.raises(
        SpecError, match="num_workers: 3 workers of 1 CPUs each need 3 CPUs, but the Ray cluster has 2"
    ):
        check_capacity({"CPU": 2.0}, 3, 1.0)
    check_capacity({"CPU": 2.0}, 4, 0.5)  # workers that share CPUs fit


def test_on_the_cluster_rlgraph_starts_actors_that_do_not_fit_share_its_cpus_and_on_a_joined_one_are_refused(
    monkeypatch,
):
    from rlgraph_ray import cluster

    assert cpus_for(2, 1.0, 2.0) == 1.0  # they fit: as asked
    assert cpus_for(3, 1.0, 2.0) == 0.6666 and cpus_for(1, 0.5, 0.2) == 0.2  # their share of what is free
    assert cpus_for(2, 1.0, 0.0) == 0.0  # none left: none reserved (they run all the same)
    monkeypatch.setattr(cluster, "started_here", lambda: True)
    assert worker_cpus({"CPU": 2.0}, 4, 1.0) == 0.5 and worker_cpus({"CPU": 2.0}, 2, 1.0) == 1.0
    monkeypatch.setattr(cluster, "started_here", lambda: False)
    with pytest.raises(SpecError, match="num_workers: 4 workers of 1 CPUs each need 4 CPUs"):
        worker_cpus({"CPU": 2.0}, 4, 1.0)


def test_actors_that_fail_to_build_or_never_start_are_clear_errors():
    import ray

    from rlgraph_ray.actors import RayWorker
    from rlgraph_ray.cluster import wait_ready

    connect()
    spec = {"type": "apex", "network_spec": [{"type": "dense", "units": 4}]}
    broken = ray.remote(num_cpus=0)(RayWorker).remote("NoSuchEnvironment-v9", spec)
    with pytest.raises(
        ClusterError,
        match="the 1 workers failed to start: rlgraph.errors.SpecError: environment: .*'NoSuchEnvironment-v9'",
    ):
        wait_ready([broken], "1 workers", timeout=120)
    unplaceable = ray.remote(num_cpus=0, resources={"no-such-resource": 1})(RayWorker).remote(
        "CartPole-v1", spec
    )
    with pytest.raises(ClusterError, match="the 1 workers did not start within 2 s"):
        wait_ready([unplaceable], "1 workers", timeout=2)
    ray.kill(unplaceable)


def test_the_learner_goes_to_a_gpu_only_where_ray_sees_one_here_and_the_spec_places_nothing():
    from rlgraph_ray.distributed import learner_spec, local_gpus

    connect()
    spec = {"type": "apex", "execution_spec": {"seed": 3}}
    if local_gpus() >= 1:
        assert learner_spec(spec)["execution_spec"] == {"seed": 3, "device_map": {"": "gpu"}}
    else:  # this machine: the spec as it is
        assert learner_spec(spec) == spec
    placed = {"type": "apex", "execution_spec": {"device_map": {"": "cpu"}}}
    assert learner_spec(placed) == placed


@pytest.mark.over_budget("`ray start` starts a cluster of its own, which the run joins")
def test_joins_a_cluster_that_ray_start_started_under_rays_defaults(tmp_path):
    # Ray 2.60's `ray start --head` turns token authentication on where the user has a token (an embedded
    # cluster, started by ray.init, makes one under the user's home); a driver given the address must then
    # send it, with no RAY_AUTH_MODE to set. Its own home here, and its own token.
    port = closed_port()
    env = {key: value for key, value in os.environ.items() if not key.startswith(("RAY_AUTH", "RAY_ADDRESS"))}
    env["HOME"] = str(tmp_path)
    ray_cli = os.path.join(os.path.dirname(sys.executable), "ray")
    subprocess.run(
        [ray_cli, "get-auth-token", "--generate"], env=env, capture_output=True, check=True, timeout=60
    )
    head = subprocess.Popen(
        [
            ray_cli,
            "start",
            "--head",
            f"--port={port}",
            "--num-cpus=2",
            "--include-dashboard=false",
            "--block",
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        wait_until_listening(port, seconds=90)
        # Ape-X trains on it, found through RLGRAPH_RAY_ADDRESS alone, and reaches its target; the run's
        # Ray is the head's (the driver joined it: no second cluster).
        script = (
            "import ray\nfrom rlgraph.training import Trainer, load_run_spec\n"
            f"spec = load_run_spec({str(APEX_EXAMPLE)!r}, options={{'seed': 1}})\n"
            f"summary = Trainer(spec, {str(tmp_path / 'run')!r}).run()\n"
            "print('reached', summary.target_reached, 'at', ray.get_runtime_context().gcs_address)\n"
        )
        env = {**env, "RLGRAPH_RAY_ADDRESS": f"127.0.0.1:{port}"}
        done = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, timeout=600, check=False, env=env
        )
        reached = [line for line in done.stdout.splitlines() if line.startswith("reached")]
        assert reached and reached[-1].startswith("reached True at "), done.stdout + done.stderr[-3000:]
        assert reached[-1].endswith(f":{port}"), reached  # the head's GCS, at this machine's address
    finally:
        head.terminate()
        try:
            head.wait(timeout=60)
        except subprocess.TimeoutExpired:
            head.kill()


def wait_until_listening(port: int, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1.0).close()
            return
        except OSError:
            time.sleep(0.5)
    raise AssertionError(f"nothing listens on port {port} after {seconds} s")
