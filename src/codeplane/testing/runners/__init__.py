"""Runner adapters, by name. Discovery (``discovery.py``) decides which project uses which."""

from __future__ import annotations

from codeplane.testing.runners.base import BatchParser, Invocation, Project, Runner, Toolchain
from codeplane.testing.runners.cargo import CargoRunner
from codeplane.testing.runners.command import CommandRunner
from codeplane.testing.runners.dotnet import DotnetRunner
from codeplane.testing.runners.go import GoRunner
from codeplane.testing.runners.js import JestRunner, VitestRunner
from codeplane.testing.runners.jvm import GradleRunner, MavenRunner
from codeplane.testing.runners.mix import MixRunner
from codeplane.testing.runners.pytest_runner import PytestRunner
from codeplane.testing.runners.rspec import RspecRunner

RUNNERS: dict[str, Runner] = {r.name: r for r in (
    PytestRunner(), GoRunner(), CargoRunner(), JestRunner(), VitestRunner(), MavenRunner(), GradleRunner(),
    DotnetRunner(), RspecRunner(), MixRunner(), CommandRunner(),
)}

#: Runners that compete for the same files; a project of one family claims files from shallower ones.
FAMILY: dict[str, str] = {
    "pytest": "python", "jest": "js", "vitest": "js", "go": "go", "cargo": "rust", "maven": "jvm",
    "gradle": "jvm", "dotnet": "dotnet", "rspec": "ruby", "mix": "elixir", "command": "custom",
}

#: Config language names (``tests.runners: {typescript: vitest}``) → family.
LANGUAGE_FAMILY: dict[str, str] = {
    "python": "python", "javascript": "js", "typescript": "js", "js": "js", "ts": "js", "go": "go",
    "rust": "rust", "java": "jvm", "kotlin": "jvm", "csharp": "dotnet", "ruby": "ruby", "elixir": "elixir",
}

__all__ = ["FAMILY", "LANGUAGE_FAMILY", "RUNNERS", "BatchParser", "Invocation", "Project", "Runner", "Toolchain"]
