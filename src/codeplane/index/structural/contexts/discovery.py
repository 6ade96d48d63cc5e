"""§8.4.2 Phase A: candidate contexts from marker files (Tier 1 workspace fences, Tier 2 package roots)
plus one ambient root candidate for the families that have no reliable markers."""

from __future__ import annotations

import fnmatch
import posixpath
from dataclasses import dataclass, field
from functools import cache

from codeplane.index.structural.tspaths import is_config_text

#: family -> (tier 1 markers, tier 2 markers); names or ``fnmatch`` patterns on the file name.
MARKERS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "javascript": (("pnpm-workspace.yaml", "lerna.json", "nx.json", "turbo.json", "rush.json", "yarn.lock",
                    "pnpm-lock.yaml"),
                   ("package.json", "deno.json", "deno.jsonc", "tsconfig.json", "jsconfig.json")),
    "python": (("uv.lock", "poetry.lock", "Pipfile.lock"),
               ("pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "Pipfile")),
    "go": (("go.work",), ("go.mod",)),
    "rust": (("Cargo.lock",), ("Cargo.toml",)),
    "jvm": (("settings.gradle", "settings.gradle.kts"), ("build.gradle", "build.gradle.kts", "pom.xml", "build.sbt")),
    "dotnet": (("*.sln",), ("*.csproj", "*.fsproj", "*.vbproj")),
    "terraform": ((".terraform.lock.hcl",), ("main.tf", "versions.tf")),
    "ruby": (("Gemfile.lock",), ("Gemfile",)),
    "php": (("composer.lock",), ("composer.json",)),
    "config": (("flake.lock",), ("flake.nix",)),
    "protobuf": (("buf.work.yaml",), ("buf.yaml",)),
}
AMBIENT = ("sql", "docker", "markdown", "json_yaml", "graphql")
#: Markers whose content decides something (workspace lists, ``[workspace]``, declared entry points):
#: their text is kept in ``st_marker``.
CONTENT_MARKERS = frozenset({"package.json", "pnpm-workspace.yaml", "go.work", "go.mod", "Cargo.toml",
                             "settings.gradle", "settings.gradle.kts", "pyproject.toml", "tsconfig.json",
                             "jsconfig.json"})


@dataclass
class Candidate:
    family: str
    root: str
    tier: int  # 1 fence, 2 package root, 0 ambient
    markers: list[str] = field(default_factory=list)
    status: str = "pending"  # pending | valid | failed | empty | detached
    exclude: list[str] = field(default_factory=list)
    samples: list[str] = field(default_factory=list)


@cache
def _marker_families(name: str) -> list[tuple[str, int]]:
    found: list[tuple[str, int]] = []
    for family, (tier1, tier2) in MARKERS.items():
        for tier, names in ((1, tier1), (2, tier2)):
            if any(fnmatch.fnmatchcase(name, pattern) for pattern in names):
                found.append((family, tier))
    return found


def is_marker(path: str) -> bool:
    """A file whose presence or text the index reads beyond its facts: context markers and the configs an
    ``extends`` names (``tsconfig.base.json``; they make no context)."""
    return bool(_marker_families(posixpath.basename(path))) or "/.mvn/" in f"/{path}" or is_config_text(path)


def keeps_text(path: str) -> bool:
    """Whether the index keeps ``path``'s text (``st_marker``): a marker whose content decides something."""
    return posixpath.basename(path) in CONTENT_MARKERS or is_config_text(path)


def discover(paths: list[str], contents: dict[str, str]) -> list[Candidate]:
    """Candidates by (family, root); a directory holding both tiers' markers is one Tier 1 candidate."""
    found: dict[tuple[str, str], Candidate] = {}
    for path in paths:
        directory, _, name = path.rpartition("/")
        hits = list(_marker_families(name))
        if "/.mvn/" in f"/{path}":
            hits.append(("jvm", 1))
            directory = f"/{path}".split("/.mvn/", 1)[0].lstrip("/")
        for family, marker_tier in hits:
            tier = _promote(family, marker_tier, name, contents.get(path, ""))
            key = (family, directory)
            candidate = found.setdefault(key, Candidate(family, directory, tier))
            candidate.tier = min(candidate.tier, tier)
            if path not in candidate.markers:
                candidate.markers.append(path)
    for family in AMBIENT:
        found.setdefault((family, ""), Candidate(family, "", 0, ["(ambient)"]))
    if not any(c.family == "protobuf" and "buf.yaml" in " ".join(c.markers) for c in found.values()):
        found.setdefault(("protobuf", ""), Candidate("protobuf", "", 0, ["(ambient)"]))
    return [found[k] for k in sorted(found)]


def _promote(family: str, tier: int, name: str, text: str) -> int:
    """Markers that are Tier 1 only with certain content (§8.4.2 ``w/ workspaces``, ``w/ [workspace]``)."""
    if family == "javascript" and name == "package.json" and '"workspaces"' in text:
        return 1
    if family == "rust" and name == "Cargo.toml" and "[workspace]" in text:
        return 1
    return tier
