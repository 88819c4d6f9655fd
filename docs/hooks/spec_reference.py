"""MkDocs hook: the spec reference page, generated from the installed agents' and components'
constructors (every key, its type and default), through the same code as ``rlgraph agents KEY``."""

from __future__ import annotations

from typing import Any

MARKER = "<!-- spec-reference -->"


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    """Replace the marker of ``spec-reference.md`` with the generated tables."""
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, spec_reference())


def spec_reference() -> str:
    """Markdown: a section per agent, then per component, each with a table of its spec keys."""
    from rlgraph.cli.catalog import describe
    from rlgraph.plugins import list_plugins

    sections = [_run_spec()]
    for group, title in (("rlgraph.agents", "Agents"), ("rlgraph.components", "Components")):
        sections.append(f"## {title}\n")
        for info in sorted(list_plugins(group), key=lambda info: info.name):
            if info.status not in ("ok", "loaded"):
                continue
            sections.append(_entry(describe(group, info.name), info.distribution))
    return "\n".join(sections)


def _run_spec() -> str:
    """The run spec's keys (``rlgraph train``'s files), ``evaluation`` as nested keys."""
    import attrs

    from rlgraph.cli.catalog import shown_default
    from rlgraph.specs.validation import type_name
    from rlgraph.training.spec import EvaluationSpec, RunSpec

    rows = ["| key | type | default |", "| --- | --- | --- |"]
    for prefix, spec_class in (("", RunSpec), ("evaluation.", EvaluationSpec)):
        for field in attrs.fields(spec_class):
            if field.name == "evaluation":
                continue
            required = field.default is attrs.NOTHING
            default = "*required*" if required else f"`{shown_default(field.default)!r}`"
            rows.append(f"| `{prefix}{field.name}` | `{type_name(field.type)}` | {default} |")
    return (
        "## Run specs\n\nWhat `rlgraph train` trains (`agent` holds the agent spec, below), where and how "
        "long. See `rlgraph.training.RunSpec` in the [API reference](api.md).\n\n" + "\n".join(rows) + "\n"
    )


def _entry(info: dict[str, Any], distribution: str) -> str:
    rows = ["| key | type | default |", "| --- | --- | --- |"]
    for key in info["keys"]:
        default = "*required*" if key["required"] else f"`{key['default']!r}`"
        rows.append(f"| `{key['key']}` | `{key['type']}` | {default} |")
    more = "\n\nFurther keys pass on to the class's base." if info["more_keys"] else ""
    if info.get("aliases"):
        names = ", ".join(f"`{alias}` for `{target}`" for alias, target in info["aliases"].items())
        more += f"\n\nRLgraph's other names, accepted: {names}."
    summary = info["summary"].replace("``", "`")
    return (
        f"### `{info['name']}`\n\n`{info['class']}` ({distribution}). {summary}\n\n"
        + "\n".join(rows)
        + more
        + "\n"
    )
