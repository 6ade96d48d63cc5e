"""Settings a repository's own tracked config may not make: who can connect, and where data goes (D4).

A ``.codeplane/config.yaml`` that git tracks came with the repository (``.codeplane/.gitignore`` is ``*``, so
whoever wrote the repository force-added it), not from the user who runs ``cpl up`` on a clone. Trusted, it bound
the server to every interface, let a foreign Host/Origin read ``/status``, ``/metrics`` and the dashboard's
operations, and exported every call's trace (the repository's path, the names of written files) to a collector the
repository chose. README's "nothing leaves the machine unless *you* set ``observability.otlp_endpoint``" and D4's
"explicit config" mean the user's own layers: the global config, the environment, ``--set``.

So for each key of :data:`EXPOSURE`, a tracked repo file's value is
- ignored when one of the user's own layers sets the key: theirs decides, the global config's too (which otherwise
  ranks below the repo's), so setting it once in ``~/.config`` settles it for every clone;
- taken when it opens nothing (``server.host: 127.0.0.1``, an empty list, ``require_token: true``, log files
  inside the repository);
- refused otherwise (2002, exit 78), naming the key, the file, and where to set it instead. Refused rather than
  ignored: a server that silently ignored a team's setting would look misconfigured, and one that honoured it
  would be the hole.

An untracked repo config (the user's own, as ``cpl init`` writes it) is trusted as before. Not covered:
``index.artifact`` (a download the repository names: its bytes are verified and nothing of the user's is sent),
and the commands ``tests.runners`` names (running a repository's tests runs its code anyway).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codeplane.core.procs import run

#: The repo config's path inside the work tree, as git names it.
REPO_CONFIG = ".codeplane/config.yaml"


def _not_loopback(value: Any) -> bool:
    if not isinstance(value, str):
        return True  # the model refuses it anyway; never taken from this file
    name = value.strip().lower().strip("[]")
    if name == "localhost":
        return False
    try:
        return not ipaddress.ip_address(name).is_loopback
    except ValueError:
        return True


def _outside(value: Any, repo_root: Path) -> bool:
    """Whether a log output writes a file outside the repository (symlinks followed): a clone's config named
    ``~/.bashrc``, which the log's rotation would then have renamed away."""
    if not isinstance(value, list | tuple):
        return False  # the model refuses it
    root = repo_root.resolve()
    for output in value:
        destination = output.get("destination") if isinstance(output, Mapping) else None
        if not isinstance(destination, str) or destination in ("stderr", "stdout"):
            continue
        if not (root / destination).resolve().is_relative_to(root):
            return True
    return False


@dataclass(frozen=True)
class Exposure:
    """What a key opens when set (``widens`` tells whether a value does, given the repository root), in the
    refusal's words."""

    what: str
    widens: Callable[[Any, Path], bool]


#: The keys only the user's own layers may set to a value that widens exposure.
EXPOSURE: Mapping[str, Exposure] = {
    "server.host": Exposure("lets other machines connect to the server", lambda value, _: _not_loopback(value)),
    "server.extra_allowed_hosts": Exposure("lets pages and proxies of other names use the server",
                                           lambda value, _: bool(value)),
    # ``false`` from the repository is the default anyway; what matters is that it never overrides a user's true.
    "server.require_token": Exposure("drops the token every request must carry", lambda value, _: False),
    "observability.otlp_endpoint": Exposure("sends every call's trace off this machine",
                                            lambda value, _: value is not None),
    "logging.outputs": Exposure("writes the server's log outside the repository", _outside),
}


@dataclass(frozen=True)
class Held:
    """A value the tracked repo file set for an :data:`EXPOSURE` key, held back from the merge."""

    key: str
    value: Any


def hold_exposure(values: dict[str, Any], repo_root: Path) -> tuple[dict[str, Any], list[Held]]:
    """``values`` (the repo file's) without its :data:`EXPOSURE` keys, and those keys, when git tracks the file;
    ``values`` unchanged otherwise. Git runs only when the file sets one of those keys."""
    found = [(key, _get(values, key)) for key in EXPOSURE]
    held = [Held(key, value) for key, value in found if value is not _ABSENT]
    if not held or not tracked(repo_root):
        return values, []
    kept = _without(values, [h.key for h in held])
    return kept, held


def tracked(repo_root: Path) -> bool:
    """Whether git tracks the repo config of ``repo_root``. An answer git could not give in time counts as
    tracked: this decides whether a file may open the server."""
    result = run(["git", "ls-files", "--error-unmatch", "--", REPO_CONFIG], cwd=repo_root, timeout_s=30)
    return result.timed_out or result.returncode == 0


_ABSENT = object()


def _get(values: Mapping[str, Any], dotted: str) -> Any:
    node: Any = values
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return _ABSENT
        node = node[part]
    return node


def _without(values: dict[str, Any], keys: list[str]) -> dict[str, Any]:
    """A copy of ``values`` with the dotted ``keys`` removed (their sections are kept, even if left empty)."""
    copy: dict[str, Any] = dict(values)
    for dotted in keys:
        *sections, leaf = dotted.split(".")
        node = copy
        for part in sections:
            node[part] = dict(node[part])  # copied on the way down: the caller's mapping stays as it was
            node = node[part]
        node.pop(leaf, None)
    return copy
