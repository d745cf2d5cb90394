"""Commands installed under the entry-point group `stackgraph.commands` join the CLI (the
demo is one): found through importlib.metadata, never shadowing a built-in command, and a
package whose command fails to load is reported without breaking the others."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from stackgraph.cli.app import COMMANDS_GROUP, add_installed_commands


def install_plugin(root: Path) -> None:
    """A distribution on sys.path as pip leaves one: a .dist-info with entry points."""
    info = root / "sgplugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: sgplugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        f"[{COMMANDS_GROUP}]\nhello = sgplugin_cmd:hello\nbroken = sgplugin_missing:run\n"
        "serve = sgplugin_cmd:hello\n"
    )
    (root / "sgplugin_cmd.py").write_text(
        "def hello(name: str = 'world') -> None:\n"
        "    '''Say hello.'''\n"
        "    print(f'hello, {name}')\n"
    )


def test_installed_commands_join_the_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    install_plugin(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    target = typer.Typer()

    @target.command()
    def serve() -> None:
        """The built-in one."""
        print("built-in serve")

    added = add_installed_commands(target)
    assert "demo" in added and "hello" in added
    assert "serve" not in added and "broken" not in added
    assert "command 'broken' (sgplugin_missing:run) not loaded" in capsys.readouterr().err
    runner = CliRunner()
    assert runner.invoke(target, ["hello", "--name", "sg"]).output == "hello, sg\n"
    assert runner.invoke(target, ["serve"]).output == "built-in serve\n"
    assert add_installed_commands(target) == []  # a second call adds nothing twice


def test_the_demo_command_is_an_installed_one() -> None:
    """`stackgraph demo` comes from the demo package's entry point, not from the CLI."""
    from importlib.metadata import entry_points

    (demo,) = [ep for ep in entry_points(group=COMMANDS_GROUP) if ep.name == "demo"]
    assert demo.value == "stackgraph.demo.command:demo"
    from stackgraph.cli import app

    built_in = {c.name or getattr(c.callback, "__name__", "") for c in app.registered_commands}
    assert "ingest" in built_in and "demo" not in built_in
