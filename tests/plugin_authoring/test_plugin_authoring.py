"""docs/writing-a-plugin.md, step by step, in the running environment.

Generates a plugin with ``rlgraph new-plugin``, installs it, lists it, uses it from a spec in a
fresh process, runs its own test suite and certifies it with ``rlgraph certify``; then installs a
plugin that fails at import and checks that it is reported while everything else keeps working.
Both are uninstalled at the end.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from packaging.version import Version

pytestmark = [
    pytest.mark.plugin_authoring,
    pytest.mark.skipif(
        os.environ.get("RLGRAPH_PLUGIN_AUTHORING") != "1",
        reason="installs and uninstalls packages in this environment: run `nox -s plugin_authoring` "
        "(or set RLGRAPH_PLUGIN_AUTHORING=1 in a throwaway venv)",
    ),
]

GROUP = "rlgraph.components"
SCALE = "guide_scale"  # created as `rlgraph new-plugin guide-scale`
BROKEN = "guide_broken"
BROKEN_MESSAGE = "guide_broken fails at import on purpose"
USE_SCALE_FROM_SPEC = """
import rlgraph
from rlgraph.spaces import FloatBox
from rlgraph.testing import ComponentTest, numpy_backend

numpy_backend.register()  # the core's reference backend, as the rlgraph_backend fixture does
component = rlgraph.from_spec({"type": "guide-scale", "initial": 3.0})
assert type(component).__module__ == "rlgraph_guide_scale.components", type(component)
test = ComponentTest(
    component, input_spaces={"inputs": FloatBox(shape=(3,), add_batch_rank=True)}, backend="numpy"
)
x = test.input_spaces["inputs"].sample(4)
test.test(("scale", x), expected_outputs=3.0 * x, decimals=5)
"""


def run(
    *command: str, cwd: Path | None = None, env: dict[str, str] | None = None, check: bool = True
) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        command,
        check=False,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if check and result.returncode != 0:
        pytest.fail(f"{' '.join(command)} exited {result.returncode}\n{result.stdout}\n{result.stderr}")
    return result


def rlgraph_cli(
    *args: str, env: dict[str, str] | None = None, check: bool = True
) -> subprocess.CompletedProcess[str]:
    return run(str(Path(sys.executable).with_name("rlgraph")), *args, env=env, check=check)


def pip(*args: str) -> subprocess.CompletedProcess[str]:
    return run(sys.executable, "-m", "pip", *args, "--quiet", "--disable-pip-version-check")


def install(path: Path, editable: bool = False) -> None:
    setuptools = importlib.metadata.version("setuptools")
    if Version(setuptools) < Version("70.1"):
        pytest.fail(f"needs setuptools>=70.1 to install without build isolation, found {setuptools}")
    pip("install", "--no-deps", "--no-build-isolation", *(["-e"] if editable else []), str(path))


def listed(*args: str, env: dict[str, str] | None = None) -> dict[str, dict]:
    """``rlgraph plugins --json ARGS``: the rows of group rlgraph.components, by name."""
    result = rlgraph_cli("plugins", "--group", GROUP, "--json", *args, env=env, check=False)
    return {row["name"]: row for row in json.loads(result.stdout) if row["group"] == GROUP}


@pytest.fixture(scope="module")
def scale_plugin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Step 1-2: generate rlgraph-guide-scale and install it (editable)."""
    parent = tmp_path_factory.mktemp("plugins")
    created = rlgraph_cli("new-plugin", "guide-scale", "--directory", str(parent))
    assert "pip install -e" in created.stdout
    path = parent / "rlgraph-guide-scale"
    install(path, editable=True)
    yield path
    pip("uninstall", "-y", "rlgraph-guide-scale")


@pytest.fixture(scope="module")
def broken_plugin(tmp_path_factory: pytest.TempPathFactory, scale_plugin: Path) -> Iterator[Path]:
    """A plugin written by hand whose module raises at import."""
    path = tmp_path_factory.mktemp("broken") / "rlgraph-guide-broken"
    package = path / "src" / "rlgraph_guide_broken"
    package.mkdir(parents=True)
    (path / "pyproject.toml").write_text(
        textwrap.dedent(f"""\
            [build-system]
            requires = ["setuptools>=69"]
            build-backend = "setuptools.build_meta"

            [project]
            name = "rlgraph-guide-broken"
            version = "0.1.0"
            dependencies = ["rlgraph"]

            [project.entry-points."{GROUP}"]
            {BROKEN} = "rlgraph_guide_broken:Broken"
            """)
    )
    # Broken is defined, so only importing the module (rlgraph plugins --check) finds the error.
    (package / "__init__.py").write_text(
        f"raise RuntimeError({BROKEN_MESSAGE!r})\n\n\nclass Broken:\n    pass\n"
    )
    install(path)
    yield path
    pip("uninstall", "-y", "rlgraph-guide-broken")


def test_generated_plugin_is_listed_ok(scale_plugin: Path) -> None:
    row = listed()[SCALE]
    assert row["status"] == "ok"
    assert (row["distribution"], row["version"]) == ("rlgraph-guide-scale", "0.1.0")
    assert SCALE in rlgraph_cli("plugins").stdout


def test_generated_plugin_builds_from_a_spec_in_a_fresh_process(scale_plugin: Path) -> None:
    run(sys.executable, "-c", USE_SCALE_FROM_SPEC)


def test_generated_plugin_own_tests_pass(scale_plugin: Path) -> None:
    result = run(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", cwd=scale_plugin)
    assert " passed" in result.stdout and "failed" not in result.stdout


def test_generated_plugin_is_certified_with_one_command(scale_plugin: Path) -> None:
    # No backend is installed in this session: certification runs on the core's NumPy reference.
    result = rlgraph_cli("certify", "rlgraph-guide-scale", "--profile", "ci")
    assert "RLgraph certificate: rlgraph-guide-scale 0.1.0" in result.stdout
    assert "components: guide_scale" in result.stdout
    # 3 examples a case, and one more for the space the first case draws (built anew)
    assert "profile:    ci: 2 cases, 7 examples" in result.stdout
    assert re.search(r"sampled_spaces +1\n", result.stdout), result.stdout
    assert "CERTIFIED: rlgraph-guide-scale 0.1.0 on numpy" in result.stdout


def test_broken_plugin_is_reported_and_isolated(broken_plugin: Path) -> None:
    # Listing reads metadata only: the broken module is not imported, the command succeeds.
    assert listed()[BROKEN]["status"] == "ok"
    assert BROKEN in rlgraph_cli("plugins").stdout

    checked = rlgraph_cli("plugins", "--check", check=False)
    assert checked.returncode == 1
    assert f"broken: RuntimeError: {BROKEN_MESSAGE}" in checked.stdout
    rows = listed("--check")
    assert rows[BROKEN]["status"] == "broken"
    assert BROKEN_MESSAGE in rows[BROKEN]["error"]
    assert rows[SCALE]["status"] in ("ok", "loaded")  # loaded: --check imported it

    run(sys.executable, "-c", USE_SCALE_FROM_SPEC)
    loading_broken = (
        "import rlgraph\nfrom rlgraph.errors import PluginLoadError\n"
        "try:\n"
        f"    rlgraph.from_spec({{'type': {BROKEN!r}}})\n"
        "except PluginLoadError as error:\n"
        "    print(error)\n"
    )
    assert "rlgraph-guide-broken" in run(sys.executable, "-c", loading_broken).stdout


def test_disabled_plugin_is_not_loaded(broken_plugin: Path) -> None:
    rows = listed("--check", env={"RLGRAPH_DISABLE_PLUGINS": BROKEN})
    assert rows[BROKEN]["status"] == "disabled"
    assert rows[SCALE]["status"] in ("ok", "loaded")  # loaded: --check imported it
