"""``rlgraph new-plugin``: name validation, the generated distribution's files, overwrite rules."""

from __future__ import annotations

import argparse
import ast
import tomllib

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

import rlgraph
from rlgraph.cli import new_plugin


def run_command(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="rlgraph new-plugin")
    new_plugin.add_arguments(parser)
    return new_plugin.run(parser.parse_args(argv))


@pytest.mark.parametrize(
    ("name", "distribution", "package", "class_name", "entry_point"),
    [
        ("scale", "rlgraph-scale", "rlgraph_scale", "Scale", "scale"),
        ("my-memory", "rlgraph-my-memory", "rlgraph_my_memory", "MyMemory", "my_memory"),
        ("my_memory2", "rlgraph-my-memory2", "rlgraph_my_memory2", "MyMemory2", "my_memory2"),
    ],
)
def test_names_follow_the_plugin_name(name, distribution, package, class_name, entry_point):
    names = new_plugin.template_names(name)
    assert names["distribution"] == distribution
    assert names["package"] == package and package.isidentifier()
    assert names["class_name"] == class_name
    assert names["name"] == entry_point


@pytest.mark.parametrize(
    "name", ["", "Scale", "1x", "my--memory", "memory-", "-memory", "my memory", "mémoire"]
)
def test_invalid_names_are_refused_with_an_example(name):
    with pytest.raises(ValueError, match="e.g. 'scale'"):
        new_plugin.template_names(name)


def test_distribution_prefix_is_refused_with_the_name_to_use():
    with pytest.raises(ValueError, match="without the 'rlgraph-' prefix: 'scale'"):
        new_plugin.template_names("rlgraph-scale")


@pytest.mark.parametrize(
    ("version", "inside", "outside"),
    [
        ("0.1.0", ["0.1.0", "0.1.9"], ["0.0.9", "0.2.0", "1.0.0"]),
        ("0.12.3", ["0.12.0", "0.12.7"], ["0.11.9", "0.13.0"]),
        ("1.4.2", ["1.4.0", "1.9.9"], ["1.3.9", "2.0.0"]),
    ],
)
def test_compatible_range(version, inside, outside):
    specifier = SpecifierSet(new_plugin.compatible_range(version))
    assert all(Version(v) in specifier for v in inside)
    assert not any(Version(v) in specifier for v in outside)


def test_generated_distribution(tmp_path, capsys):
    assert run_command("my-memory", "--directory", str(tmp_path)) == 0
    root = tmp_path / "rlgraph-my-memory"
    package = root / "src" / "rlgraph_my_memory"

    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    assert project["name"] == "rlgraph-my-memory"
    (requirement,) = project["dependencies"]
    assert requirement.startswith("rlgraph>=")
    assert Version(rlgraph.__version__) in SpecifierSet(requirement.removeprefix("rlgraph"))
    assert project["entry-points"] == {
        "rlgraph.components": {"my_memory": "rlgraph_my_memory.components:MyMemory"},
        "rlgraph.test_cases": {"rlgraph_my_memory": "rlgraph_my_memory.cases:CASES"},
    }

    assert (package / "py.typed").exists() and (root / "README.md").exists()
    module = ast.parse((package / "components.py").read_text())
    assert "MyMemory" in {node.name for node in module.body if isinstance(node, ast.ClassDef)}
    test_source = (root / "tests" / "test_my_memory.py").read_text()
    assert "ComponentTest" in test_source and "rlgraph_backend" in test_source
    assert "rlgraph_properties(case)" in test_source and (package / "cases.py").exists()
    for path in root.rglob("*"):
        if path.is_file():
            assert "$" not in path.read_text(), f"unfilled placeholder in {path}"
            if path.suffix == ".py":
                ast.parse(path.read_text(), filename=str(path))
    assert f'pip install -e "{root}[test]"' in capsys.readouterr().out  # [test] installs pytest


def test_existing_folder_is_kept_unless_forced(tmp_path, capsys):
    assert run_command("scale", "--directory", str(tmp_path)) == 0
    readme = tmp_path / "rlgraph-scale" / "README.md"
    readme.write_text("edited")

    assert run_command("scale", "--directory", str(tmp_path)) == 1
    assert "already exists" in capsys.readouterr().err and readme.read_text() == "edited"

    assert run_command("scale", "--directory", str(tmp_path), "--force") == 0
    assert readme.read_text() != "edited"


def test_invalid_name_exits_2_and_writes_nothing(tmp_path, capsys):
    assert run_command("Bad Name", "--directory", str(tmp_path)) == 2
    assert "invalid plugin name 'Bad Name'" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
