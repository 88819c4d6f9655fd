"""The test matrix: which packages are installed together, and which tests run there.

``nox`` runs every session this machine can run; ``nox -s NAME`` one of them; ``nox -l`` lists them.
Each session installs its packages with ``-c constraints.txt`` (pins shared with the README setup
and CI), so an unpinned dependency never pulls, say, a CUDA build of torch.

A session is one install set, named for it. The core's session installs nothing but the core: it
proves the core works, and its tests pass, with no torch, tensorflow or ray. A backend gets a
session (``torch``, ``tf``, ``jax``) installing the core, the backend and the component and algorithm
packages (and neither other backend), running their tests (``torch`` also installs the experiment
trackers with MLflow and W&B, and runs theirs); ``parity`` installs all three backends and
checks that every component and a stored agent give the same numbers on each, and that every component
keeps the generic properties (``rlgraph.testing.properties``) on each (``properties``: with many more
examples); ``ray`` runs rlgraph-ray's executors on an embedded local Ray cluster (with PyTorch); ``install_order`` installs the README's
set-up into fresh venvs, the two backends in either order, and trains to a first evaluation; ``docs``
builds the documentation site with ``--strict``. Long learning runs are marked ``learning``: the backend sessions skip them (each learning
test keeps one representative case unmarked, so CI still trains), and ``nox -s learning`` runs
them all.

The backend, parity and properties sessions run their tests in parallel processes (pytest-xdist, one per
core up to 4: each test pins its framework to one thread, so the workers do not oversubscribe the cores);
``nox -s torch -- -n 0`` runs them in one process.

The sessions install with uv where nox finds it (``pip install "nox[uv]"``, the README's test command), with
pip where not; ``plugin_authoring`` and ``install_order`` always with pip, whose flows they check.

Virtualenvs are reused between runs (``reuse_venv = "yes"``: recreated when the interpreter or
backend changes; ``nox --reuse-venv=no`` recreates them all); every run reinstalls the local
packages, so a reused venv runs the current code. ``RLGRAPH_NOX_DISCARD_VENVS=1`` (set by ``.ci/run``, on a
clean clone that reuses none) deletes each session's venv when it ends, so that the run needs the disk of one
session at a time, not of all of them.
"""

from __future__ import annotations

import atexit
import functools
import json
import os
import shutil
import tempfile
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nox

SessionBody = Callable[..., None]

nox.needs_version = ">=2024.4.15"
nox.options.reuse_venv = "yes"
nox.options.error_on_missing_interpreters = True
#: Sessions install with uv where nox finds it (the README's test command installs ``nox[uv]``), else with pip.
#: uv links each framework's files from its cache into a venv where pip unpacks them again in every session:
#: torch, TensorFlow and JAX install into a fresh venv in 31 s in place of 110 (uv's cache warm; 46 s cold).
#: The sessions that check pip's own flows (the README's set-up, a generated plugin's install) keep pip.
nox.options.default_venv_backend = "uv|virtualenv"
# uv byte-compiles what it installs, as pip does (see CONSTRAINTS), and takes wheels from where pip is told
# to look for them (this machine keeps torch's CPU build there; uv reads none of pip's configuration).
os.environ.setdefault("UV_COMPILE_BYTECODE", "1")
if os.environ.get("PIP_FIND_LINKS"):
    os.environ.setdefault("UV_FIND_LINKS", os.environ["PIP_FIND_LINKS"])
PIP = "virtualenv"
nox.options.sessions = [
    "lint",
    "types",
    "core",
    "plugin_authoring",
    "torch",
    "tf",
    "jax",
    "parity",
    "ray",
    "install_order",
    "docs",
]

PYTHON = "3.11"
#: Set by .ci/run: each session's virtualenv (its tmp folder within) is deleted when the session ends. A clean
#: clone reuses none, and all of a run's venvs together (each backend's frameworks, several times) outgrow a
#: small disk.
DISCARD_VENVS = os.environ.get("RLGRAPH_NOX_DISCARD_VENVS") == "1"
ROOT = Path(__file__).parent
#: Every install's pins. (pip byte-compiles what it installs, and the sessions keep that: with
#: ``PYTHONDONTWRITEBYTECODE=1``, set on this machine (CI's kind), Python writes no bytecode itself, and a venv installed
#: with ``--no-compile`` compiled torch's, TensorFlow's and JAX's modules again in every process that imported
#: them: the tf session took 11 minutes in place of 5.)
CONSTRAINTS = ("-c", str(ROOT / "constraints.txt"))
# What the core must never import, nor have installed beside it in its session.
FORBIDDEN_IN_CORE = ("torch", "tensorflow", "ray")
# The backend-neutral packages: components and algorithms, run by every backend session.
COMPONENT_PACKAGES = ("./plugins/rlgraph_memories", "./plugins/rlgraph_networks", "./rlgraph_algos")
COMPONENT_TESTS = ("tests/memories", "tests/networks", "tests/algos")
TORCH_PACKAGES = ("./rlgraph_torch[test]", *COMPONENT_PACKAGES)
TF_PACKAGES = ("./rlgraph_tf[cpu]", *COMPONENT_PACKAGES)
JAX_PACKAGES = ("./rlgraph_jax", *COMPONENT_PACKAGES)
# The experiment trackers' callbacks observe the trainer whatever the backend: one session tests them.
TRACKER_PACKAGES = ("./plugins/rlgraph_trackers[mlflow,wandb]",)
TRACKER_TESTS = ("tests/trackers",)
# gymnax's environments in JAX: the compiled executor's (jax session), and every backend's (parity session).
GYMNAX_PACKAGES = ("./plugins/rlgraph_gymnax",)
GYMNAX_TESTS = ("tests/gymnax",)
RUFF = "ruff==0.17.6"
MYPY = "mypy==2.4.1"
#: XLA's quickest compiles of CPU code for the tests' many small programs: the least optimization (the programs
#: compile in about 60% of the time; the jax session's tests, compiled training to its targets among them, run in
#: 80% of it), and the CPU backend's classic fusion emitters in place of its MLIR ones (jaxlib 0.10's default):
#: compiles take about half again (the SAC agent's tests on jax compile in 10.1 s, not 18.9; they run in 33 s, not
#: 42; parity's policy, dueling, beta and categorical cases in 84 s, not 110; the compiled population's example
#: trains to its target in 12.4 s, not 15.3). Users' programs keep XLA's defaults.
QUICK_XLA = {"XLA_FLAGS": "--xla_backend_optimization_level=0 --xla_cpu_use_fusion_emitters=false"}
#: TensorFlow's graphs run without Grappler's optimization (``rlgraph_tf``'s ``RLGRAPH_TF_OPTIMIZE_GRAPHS=0``): a
#: traced method's first call comes sooner. The SAC and DQN agents' tests on tf run in 50 s, not 59 (48 s
#: without TensorFlow's import: 39).
QUICK_TF = {"RLGRAPH_TF_OPTIMIZE_GRAPHS": "0"}
#: The quick compiles of each backend's session.
QUICK_COMPILES = {"jax": QUICK_XLA, "tf": QUICK_TF}
#: pytest-xdist's workers for the long sessions: one per core, at most 4 (each holds a framework in memory).
PARALLEL = ("-n", str(min(4, os.cpu_count() or 1)))


#: The local packages' wheels of this nox run, by package (``./core``): each is built once, from a clean build,
#: by the first session that installs it, and every later session installs the same wheel (a package's build
#: costs about 2.5 s, its own build environment included, where installing its wheel costs a fraction).
LOCAL_WHEELS: dict[str, Path] = {}


def install_local(session: nox.Session, *requirements: str) -> None:
    """Install local packages (``./core[test]``, ...) under the constraints, as this run's wheels of them."""
    wheels = []
    for requirement in requirements:
        package, bracket, extras = requirement.partition("[")
        wheels.append(f"{local_wheel(session, package)}{bracket}{extras}")
    session.install(*CONSTRAINTS, *wheels)


def local_wheel(session: nox.Session, package: str) -> Path:
    """The wheel of local ``package`` built in this run (built now, in ``session``, where there is none)."""
    if package not in LOCAL_WHEELS:
        # setuptools builds in <package>/build/ and never deletes files there: a module removed
        # from the source would live on in the wheel.
        shutil.rmtree(ROOT / package / "build", ignore_errors=True)
        folder = Path(tempfile.mkdtemp(prefix="rlgraph-wheel-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        if session.venv_backend == "uv":
            session.run_install(
                "uv", "build", "--wheel", "-q", "--out-dir", str(folder), package, silent=True
            )
        else:
            session.run_install(
                "python", "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(folder), package, silent=True
            )
        (LOCAL_WHEELS[package],) = folder.glob("*.whl")
    return LOCAL_WHEELS[package]


#: Where the test sessions write line coverage data (``RLGRAPH_COVERAGE=DIR nox``), or None: no coverage is
#: measured. ``nox -s coverage`` then reports each distribution's coverage, combined over the sessions.
COVERAGE_DIR = Path(os.environ["RLGRAPH_COVERAGE"]).resolve() if os.environ.get("RLGRAPH_COVERAGE") else None
COVERAGE_TOOLS = ("coverage", "pytest-cov")


def run_tests(session: nox.Session, *args: str, env: dict[str, str], parallel: bool = False) -> None:
    """pytest ``args``; with ``parallel``, on :data:`PARALLEL` workers (pytest-xdist, installed under the
    constraints), listing the slowest tests so that CI's log shows where its time goes. Under
    :data:`COVERAGE_DIR`, with line coverage (pyproject.toml's [tool.coverage]: subprocesses too)."""
    options: list[str] = []
    if parallel:
        session.install(*CONSTRAINTS, "pytest-xdist")
        options += ["--durations=15", *PARALLEL]
    if COVERAGE_DIR is not None:
        session.install(*CONSTRAINTS, *COVERAGE_TOOLS)
        options += ["--cov", "--cov-report="]
        env = {**env, "COVERAGE_FILE": str(COVERAGE_DIR / f".coverage.{session.name}")}
    session.run("pytest", *args, "-q", *options, *session.posargs, env=env)


def test_env(session: nox.Session, **extra: str) -> dict[str, str]:
    """Environment for test runs: caches, configuration and RLgraph's files in the session's tmp."""
    home = Path(session.create_tmp()) / "home"
    home.mkdir(exist_ok=True)
    return {
        "HOME": str(home),
        "RLGRAPH_HOME": str(home / ".rlgraph"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        **extra,
    }


def assert_not_installed(session: nox.Session, *modules: str) -> None:
    """Fail the session if any of ``modules`` is importable in its venv."""
    check = (
        "import importlib.util, sys\n"
        f"found = [m for m in {modules!r} if importlib.util.find_spec(m) is not None]\n"
        "sys.exit(f'must not be installed in this session: {found}' if found else 0)"
    )
    session.run("python", "-c", check, silent=True)


def session(*, reuse_venv: bool | None = None, **options: Any) -> Callable[[SessionBody], SessionBody]:
    """``nox.session`` on :data:`PYTHON`; the venv is deleted when the session ends where it is never reused
    (``reuse_venv=False``: once it passed) or under :data:`DISCARD_VENVS` (whatever the outcome)."""

    def decorate(body: SessionBody) -> SessionBody:
        @functools.wraps(body)
        def run(session: nox.Session, **parameters: Any) -> None:
            passed = False
            try:
                body(session, **parameters)
                passed = True
            finally:
                if DISCARD_VENVS or (passed and reuse_venv is False):
                    location = getattr(session.virtualenv, "location", None)
                    if location:
                        shutil.rmtree(location, ignore_errors=True)

        return nox.session(python=PYTHON, reuse_venv=reuse_venv, **options)(run)

    return decorate


@session()
def lint(session: nox.Session) -> None:
    """ruff check and ruff format --check over the repository."""
    session.install(RUFF)
    session.run("ruff", "check", "--output-format=concise", ".")
    session.run("ruff", "format", "--check", ".")


@session()
def types(session: nox.Session) -> None:
    """mypy over the core, the three backends and the algorithms (pyproject.toml's [tool.mypy]).

    PyTorch and JAX are installed so that their backends are checked against their types, and each backend
    against the Backend contract; the component plugins the algorithms import are installed for their types.
    TensorFlow's values are Any to mypy (pyproject.toml says why): it is not installed, nor rlgraph-tf (mypy
    reads it from its source)."""
    session.install(*CONSTRAINTS, MYPY)
    install_local(session, "./core[test]", "./rlgraph_torch", "./rlgraph_jax", *COMPONENT_PACKAGES)
    session.run("mypy")


@session()
def core(session: nox.Session) -> None:
    """The core alone, without torch, tensorflow or ray: tests/core, and tests/backends on NumPy."""
    install_local(session, "./core[test,offline]")
    assert_not_installed(session, *FORBIDDEN_IN_CORE)
    run_tests(session, "tests/core", "tests/backends", env=test_env(session))


@session(venv_backend=PIP)
def plugin_authoring(session: nox.Session) -> None:
    """docs/writing-a-plugin.md, step by step: generate, install, list, use and test a plugin."""
    install_local(session, "./core[test]")
    # The test installs the generated plugins without build isolation, with this venv's setuptools.
    session.install(*CONSTRAINTS, "setuptools>=70.1")
    env = test_env(session, RLGRAPH_PLUGIN_AUTHORING="1")
    run_tests(session, "tests/plugin_authoring", env=env)


#: Per backend: its packages, and the frameworks that must be absent from its session.
BACKENDS = {
    "torch": (TORCH_PACKAGES, ("tensorflow", "jax")),
    "tf": (TF_PACKAGES, ("torch", "jax")),
    "jax": (JAX_PACKAGES, ("torch", "tensorflow")),
}


def run_backend_session(
    session: nox.Session, backend: str, packages: tuple[str, ...] = (), tests: tuple[str, ...] = ()
) -> None:
    """One backend without the others: its own tests, the shared backend tests, the component and
    algorithm packages' tests (learning runs: the representative ones) and the parity checks that
    need no second backend; and ``tests`` of the further ``packages``."""
    backend_packages, absent = BACKENDS[backend]
    # Atari (ale-py) for the algorithms' tests
    install_local(session, "./core[test,atari,offline]", *backend_packages, *packages)
    assert_not_installed(session, *absent)
    tests = (f"tests/{backend}", "tests/backends", *COMPONENT_TESTS, "tests/parity", *tests)
    marks = "not learning and not properties"  # the parity session checks the properties on every backend
    env = test_env(session, **QUICK_COMPILES.get(backend, {}))
    run_tests(session, *tests, "-m", marks, env=env, parallel=True)


@session()
def torch(session: nox.Session) -> None:
    """PyTorch without TensorFlow: the torch backend, the component and algorithm packages, the trackers.

    The experiment trackers' callbacks (rlgraph-trackers, with MLflow and W&B) log tiny runs to a SQLite
    store and offline."""
    run_backend_session(session, "torch", TRACKER_PACKAGES, TRACKER_TESTS)


@session()
def tf(session: nox.Session) -> None:
    """TensorFlow without PyTorch: the tf backend and the same component and algorithm packages."""
    run_backend_session(session, "tf")


@session()
def jax(session: nox.Session) -> None:
    """JAX without PyTorch or TensorFlow: the jax backend, the component and algorithm packages, gymnax.

    gymnax's environments and the compiled executor (a population trained to its target in one program)."""
    run_backend_session(session, "jax", GYMNAX_PACKAGES, GYMNAX_TESTS)


ALL_BACKEND_PACKAGES = ("./core[test]", "./rlgraph_torch", "./rlgraph_jax", *TF_PACKAGES)


@session()
def parity(session: nox.Session) -> None:
    """All three backends: components agree across them, models move between them, properties hold.

    Every component's outputs agree between the backends; models move across them; every component keeps
    the generic properties on each (the derandomized ``ci`` profile: 3 examples a case); gymnax's environments
    train an agent of each backend."""
    install_local(session, *ALL_BACKEND_PACKAGES, *GYMNAX_PACKAGES)
    env = test_env(session, RLGRAPH_PROPERTIES_PROFILE="ci", **QUICK_XLA, **QUICK_TF)
    defects = "tests/backends/test_properties_catch_defects.py"  # a defect between two real backends
    gymnax = "tests/gymnax/test_gymnax_environments.py"  # gymnax's environments on every backend
    run_tests(session, "tests/parity", defects, gymnax, env=env, parallel=True)


@session()
def properties(session: nox.Session) -> None:
    """The generic properties of every component on all three backends, deeply (long; not a default).

    The ``deep`` profile: 100 fresh examples a case, 20 drawn spaces where a case draws them, batch sizes
    up to 16."""
    install_local(session, *ALL_BACKEND_PACKAGES)
    env = test_env(session, RLGRAPH_PROPERTIES_PROFILE="deep")
    tests = ("tests/parity/test_parity_components.py", "tests/backends/test_properties_catch_defects.py")
    run_tests(session, *tests, env=env, parallel=True)


@session()
def ray(session: nox.Session) -> None:
    """rlgraph-ray with PyTorch: its executors on a local Ray cluster the tests start themselves.

    Without TensorFlow. Ape-X's representative learning run and its fault tests are among them (``nox -s
    ray -- -m learning``: the other seeds). JAX is installed beside PyTorch for one test, a learner group whose
    learners are all Ray actors (its collective is joined before a process builds); every test that runs per
    backend runs on PyTorch alone."""
    install_local(session, "./core[test]", "./rlgraph_ray", *TORCH_PACKAGES, "./rlgraph_jax")
    assert_not_installed(session, "tensorflow")
    # Ray refuses a temporary folder inside the virtualenv, where nox puts TMPDIR.
    ray_tmp = Path(tempfile.gettempdir()) / f"rlgraph-nox-ray-{os.getpid()}"
    env = test_env(session, RAY_TMPDIR=str(ray_tmp), RLGRAPH_TEST_BACKENDS="torch", **QUICK_XLA)
    try:
        run_tests(session, "tests/ray", "-m", "not learning", env=env)
    finally:
        shutil.rmtree(ray_tmp, ignore_errors=True)


#: The README's install line (PyTorch) and its line adding TensorFlow beside it, as packages.
README_TORCH_INSTALL = ("./core", "./rlgraph_torch", *COMPONENT_PACKAGES)
README_TF_INSTALL = ("./rlgraph_tf[cpu]",)
SUMMARY_CHECK = (
    "import json, sys; s = json.load(open(sys.argv[1])); "
    "assert s['last_eval_mean_return'] is not None, s; "
    "assert s['backend'] == 'torch', f\"the default order picks torch, got {s['backend']}\"; "
    "print('first evaluation:', s['last_eval_mean_return'], 'on', s['backend'])"
)


@session(reuse_venv=False, venv_backend=PIP)
@nox.parametrize("order", ["torch_then_tf", "tf_then_torch"])
def install_order(session: nox.Session, order: str) -> None:
    """The README's set-up in a fresh venv, the backends installed in either order, trains to an evaluation.

    With both backends installed, its train command runs to its first evaluation on the default backend
    (PyTorch). Before TensorFlow joins PyTorch, the README's Plugins section runs as written (a plugin
    generated, installed, listed, used and certified)."""
    steps = [README_TORCH_INSTALL, README_TF_INSTALL]
    if order == "tf_then_torch":
        steps = [("./core", *README_TF_INSTALL, *COMPONENT_PACKAGES), ("./rlgraph_torch",)]
    for index, packages in enumerate(steps):
        install_local(session, *packages)
        if order == "torch_then_tf" and index == 0:  # the README's flow: its quickstart, then its plugins
            run_readme_plugin_section(session)
    run_dir = Path(session.create_tmp()) / "run"
    shutil.rmtree(run_dir, ignore_errors=True)
    train = ["rlgraph", "train", "examples/dqn_cartpole.yaml", "--timesteps", "2500", "--quiet"]
    session.run(*train, "--run-dir", str(run_dir), env=test_env(session))
    session.run("python", "-c", SUMMARY_CHECK, str(run_dir / "summary.json"))


def readme_console_block(section: str) -> list[tuple[str, list[str]]]:
    """The commands (``$ ...``) of the README section's console block, each with its output lines."""
    text = (ROOT / "README.md").read_text()
    start = text.index(f"## {section}\n")
    block = text[text.index("```console\n", start) + len("```console\n") :]
    steps: list[tuple[str, list[str]]] = []
    for line in block[: block.index("```")].splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            steps[-1][1].append(line)
    return steps


def run_readme_plugin_section(session: nox.Session) -> None:
    """The README's Plugins section as written, in an empty folder: every command succeeds and prints
    the lines the README shows (compared with runs of spaces made one)."""
    folder = Path(session.create_tmp()) / "readme-plugin"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for command, expected in readme_console_block("Plugins"):
        output = session.run(
            "bash", "-c", f"cd {folder} && {command}", silent=True, env=test_env(session), external=True
        )
        if expected:
            shown = [" ".join(line.split()) for line in str(output).strip().splitlines()]
            wanted = [" ".join(line.split()) for line in expected]
            if shown != wanted:
                session.error(f"README: {command!r} printed {shown}, the README shows {wanted}")


DOCS_TOOLS = ("mkdocs", "mkdocs-material", "mkdocstrings[python]")


@session()
def docs(session: nox.Session) -> None:
    """The documentation site, built with --strict.

    The spec reference is generated from the installed agents and components (no backend needed), the
    API reference from the docstrings."""
    install_local(session, "./core", *COMPONENT_PACKAGES)
    session.install(*CONSTRAINTS, *DOCS_TOOLS)
    site = Path(session.create_tmp()) / "site"
    session.run(
        "mkdocs", "build", "--strict", "--site-dir", str(site), env=test_env(session, NO_MKDOCS_2_WARNING="1")
    )


@session(default=False)
def coverage(session: nox.Session) -> None:
    """Line coverage per distribution, combined over the sessions that wrote it (not a default).

    ``RLGRAPH_COVERAGE=DIR nox`` first, then ``RLGRAPH_COVERAGE=DIR nox -s coverage``; written to
    ``DIR/coverage.json`` (coverage's report) and ``DIR/by_distribution.json``."""
    if COVERAGE_DIR is None:
        session.error(
            "give the folder the sessions wrote their data to: RLGRAPH_COVERAGE=DIR nox -s coverage"
        )
    session.install(*CONSTRAINTS, *COVERAGE_TOOLS)
    # The sessions' files, named: a report on a data file takes in (and deletes) the parallel files of its name.
    sessions = sorted(str(path) for path in COVERAGE_DIR.glob(".coverage.*"))
    if not sessions:
        session.error(
            f"no coverage data in {COVERAGE_DIR}: run the sessions with RLGRAPH_COVERAGE={COVERAGE_DIR} first"
        )
    data = str(COVERAGE_DIR / "combined.coverage")
    session.run("coverage", "combine", "--keep", f"--data-file={data}", *sessions)
    report = COVERAGE_DIR / "coverage.json"
    session.run("coverage", "json", f"--data-file={data}", "-o", str(report), "-q")
    # Each distribution's sources: the first folder of its package in pyproject.toml's [tool.coverage.paths].
    paths = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["coverage"]["paths"]
    folders = {package: entries[0] for package, entries in paths.items()}
    session.run("python", "-c", COVERAGE_SUMMARY, str(report), json.dumps(folders))


#: Each distribution's covered lines, printed and written to ``by_distribution.json`` beside coverage's report.
COVERAGE_SUMMARY = """
import json, pathlib, sys
report = pathlib.Path(sys.argv[1])
files = json.loads(report.read_text())["files"]
table = {}
for package, folder in json.loads(sys.argv[2]).items():
    mine = [f["summary"] for path, f in files.items() if path.startswith(folder + "/")]
    covered, total = sum(s["covered_lines"] for s in mine), sum(s["num_statements"] for s in mine)
    table[package] = round(100 * covered / total, 2) if total else None
    print(f"{package:18s} {covered:6d} of {total:6d} lines  {table[package] if total else '-'} %")
report.with_name("by_distribution.json").write_text(json.dumps(table, indent=1))
"""


@session()
def envpool(session: nox.Session) -> None:
    """EnvPool as a vector environment (an optional dependency of ~700 MB: not a default session)."""
    install_local(session, "./core[test,envpool]", *TORCH_PACKAGES)
    run_tests(session, "tests/core/test_envpool.py", env=test_env(session))


@session()
@nox.parametrize("backend", ["torch", "tf", "jax"])
def learning(session: nox.Session, backend: str) -> None:
    """Every learning run (all seeds) on one backend: minutes, not part of the default sessions."""
    install_local(session, "./core[test,atari,offline]", *BACKENDS[backend][0])
    run_tests(session, "tests/algos", "-m", "learning", env=test_env(session), parallel=True)
