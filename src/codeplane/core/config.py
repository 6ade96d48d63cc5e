"""Typed configuration with five layers (spec §4.2).

Precedence, lowest first: built-in defaults < ``~/.config/codeplane/config.yaml`` (honours
``XDG_CONFIG_HOME``) < ``<repo>/.codeplane/config.yaml`` < env ``CODEPLANE__SECTION__KEY`` <
``--set section.key=value``. Every value remembers the layer it came from, so an invalid value is
reported with its key, its value, its source and catalog code 2002 (2001 for unparsable YAML); a value
from a file also names the line and column of its key. Unknown keys are rejected too, with the known key
they most likely meant: a typo must not be silently ignored (``config_diagnostics.py``). A repo config that git
tracks (a clone brought it) may not open the server or send data out: those keys are the user's own layers'
(``config_exposure.py``).
"""

from __future__ import annotations

import os
import typing
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from codeplane.core.config_diagnostics import known_keys, locate, suggest
from codeplane.core.config_exposure import EXPOSURE, Held, hold_exposure
from codeplane.core.config_file import StrictLoader, read_yaml
from codeplane.core.errors import CodePlaneError, ErrorCode

ENV_PREFIX = "CODEPLANE__"
_GIB = 1024 * 1024 * 1024
#: The longest test run ``run_test_targets`` takes as its ``timeout_sec``; a config may not exceed it either.
_MAX_RUN_SEC = 24 * 3600

def _lower(value: Any) -> Any:
    return value.lower() if isinstance(value, str) else value


#: ``DEBUG`` or ``Info`` as well: logging's own names are upper case, and both spellings are common in configs.
LogLevel = Annotated[Literal["debug", "info", "warn", "warning", "error"], BeforeValidator(_lower)]


class _Section(BaseModel):
    # ``.inf``/``nan`` are never a setting: a run timeout of ``.inf`` was accepted, then serialised as JSON null and
    # broke every run_test_targets answer. Every number also has an upper bound (a huge retention overflowed SQLite).
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    @field_validator("*", mode="before")
    @classmethod
    def _no_bool_for_a_number(cls, value: Any, info: ValidationInfo) -> Any:
        """``max_mutations: true`` (or ``yes``) is a mistake, not the number 1 pydantic would make of it."""
        if isinstance(value, bool) and info.field_name is not None:
            annotation = cls.model_fields[info.field_name].annotation
            kinds = set(typing.get_args(annotation)) or {annotation}
            if bool not in kinds and kinds & {int, float}:
                raise ValueError(f"expected a number, got {str(value).lower()}")
        return value


class ServerConfig(_Section):
    #: Empty is refused: it bound every interface while warnings and the URL showed no address at all.
    host: str = Field(default="127.0.0.1", min_length=1)
    #: Chosen once by ``cpl init`` and stored in the repo config so client configs stay valid.
    port: int | None = Field(default=None, ge=0, le=65535)
    shutdown_timeout_sec: float = Field(default=5.0, gt=0, le=300)
    #: Optional bearer token (D4); off by default.
    require_token: bool = False
    #: Extra ``Host`` header values accepted besides loopback names (e.g. a reverse proxy name).
    extra_allowed_hosts: tuple[str, ...] = ()


class LogOutput(_Section):
    format: Literal["console", "json"] = "console"
    #: ``stderr``, ``stdout``, or a file path (relative paths are resolved against the repo root).
    destination: str = "stderr"
    #: Unset: ``logging.level``, else ``info`` for stderr/stdout and ``debug`` for a file (``effective_level``).
    level: LogLevel | None = None

    def effective_level(self, fallback: str | None) -> str:
        """This output's level: its own, else ``logging.level`` (``fallback``), else its destination's default."""
        if self.level is not None:
            return self.level
        if fallback is not None:
            return fallback
        return "info" if self.destination in ("stderr", "stdout") else "debug"


def _default_outputs() -> tuple[LogOutput, ...]:
    # No level of their own: ``logging.level`` must reach them (QA64 F1: it was a no-op while they named theirs).
    return (
        LogOutput(format="console", destination="stderr"),
        LogOutput(format="json", destination=".codeplane/logs/codeplane.jsonl"),
    )


class LoggingConfig(_Section):
    #: Every output without a level of its own follows it; unset, the console shows ``info`` and files ``debug``.
    level: LogLevel | None = None
    outputs: tuple[LogOutput, ...] = Field(default_factory=_default_outputs)
    file_max_bytes: int = Field(default=5 * 1024 * 1024, ge=4096, le=_GIB)
    file_backups: int = Field(default=3, ge=0, le=50)


class IndexConfig(_Section):
    max_file_bytes: int = Field(default=2 * 1024 * 1024, ge=1, le=_GIB)
    watch: bool = True
    debounce_ms: int = Field(default=50, ge=0, le=10_000)
    #: Longest a query waits for a touched file to be reindexed before answering 3005 (retryable).
    freshness_wait_ms: int = Field(default=5_000, ge=0, le=120_000)
    #: How long server start waits for the first reconcile before announcing; a huge cold tree then keeps
    #: building in the background and index queries answer 3004 (retryable) until it is published. MCP requests
    #: are held meanwhile, the handshake too, and MCP clients give up connecting after 60 s (the TypeScript SDK,
    #: Claude Code): the default leaves them room, so a big cold tree connects and then answers 3004 while it builds.
    startup_wait_sec: float = Field(default=30.0, ge=0, le=3600)
    #: A shared index artifact to start from (``index/artifact_adopt.py``): a path, an ``https://`` URL, or a
    #: URL template with ``{commit}``. Nothing is fetched unless this is set (D1).
    artifact: str | None = None
    #: ``if_missing``: adopt only when there is no local index yet; ``always``: replace it (``cpl up --index-from``).
    artifact_adopt: Literal["if_missing", "always"] = "if_missing"
    #: The artifact's expected sha256; without it, ``<artifact>.sha256`` (a sidecar) must exist.
    artifact_sha256: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")
    #: When SQLite's full integrity check of the artifact's ``index.db`` runs (``index/artifact_integrity.py``):
    #: ``before_adopt``, ``after_ready`` (in the background; a failure rebuilds from disk), or ``auto``: after
    #: ready when ``artifact_sha256`` pins the bytes, before adoption otherwise.
    artifact_integrity: Literal["auto", "before_adopt", "after_ready"] = "auto"
    #: The whole fetch's deadline (sidecar, download, retries); past it the index is built from disk.
    artifact_timeout_sec: float = Field(default=300.0, gt=0, le=3600)
    artifact_retries: int = Field(default=2, ge=0, le=10)
    #: For a ``{commit}`` template: how many first-parent ancestors of HEAD to try after HEAD itself.
    artifact_ancestors: int = Field(default=20, ge=0, le=1000)

    @field_validator("artifact_sha256", mode="before")
    @classmethod
    def _digits_are_a_sha(cls, value: Any) -> Any:
        """YAML reads an unquoted sha256 of only digits (rare, but a valid digest) as an integer: taken back as
        text when that is exact; otherwise (a leading 0 made it octal) the message says to quote it."""
        if isinstance(value, int) and not isinstance(value, bool):
            if len(str(value)) == 64:
                return str(value)
            raise ValueError("a sha256 of only digits must be quoted (YAML read it as a number): "
                             "index.artifact_sha256='<64 hex digits>'")
        return value


class MutationConfig(_Section):
    lock_timeout_ms: int = Field(default=2_000, ge=0, le=60_000)
    #: Most edits, and most distinct files, one batch may carry.
    max_batch_edits: int = Field(default=500, ge=1, le=10_000)
    max_batch_files: int = Field(default=200, ge=1, le=10_000)
    #: Largest file the engine reads, journals and rewrites (5007 above it).
    max_file_bytes: int = Field(default=16 * 1024 * 1024, ge=1, le=_GIB)
    #: How many lines away a drifted span may be re-anchored by its ``expected_content``.
    reanchor_window_lines: int = Field(default=200, ge=0, le=100_000)
    #: Longest unified diff a dry run returns (characters); longer ones are cut and flagged.
    max_diff_chars: int = Field(default=100_000, ge=1_000, le=100_000_000)
    #: Threads that write and fsync temp files in parallel.
    write_workers: int = Field(default=16, ge=1, le=64)


class TasksConfig(_Section):
    # The same bounds ``open_task`` takes (a config of 1e29 mutations was accepted, the same limit refused there).
    max_mutations: int = Field(default=200, ge=1, le=1_000_000)
    max_test_runs: int = Field(default=50, ge=1, le=1_000_000)
    max_duration_sec: int = Field(default=4 * 3600, ge=1, le=30 * 86_400)
    read_budget_bytes: int = Field(default=50 * 1024 * 1024, ge=1, le=1024 * _GIB)
    read_budget_calls: int = Field(default=5_000, ge=1, le=1_000_000_000)
    session_idle_timeout_sec: int = Field(default=30 * 60, ge=1, le=30 * 86_400)
    # A retention of 10^12 days overflowed SQLite's integers at every maintenance run (and stopped artifact GC).
    ledger_retention_days: int = Field(default=14, ge=1, le=36_500)
    ledger_retention_tasks: int = Field(default=500, ge=1, le=100_000_000)
    artifact_retention_hours: int = Field(default=48, ge=1, le=876_000)
    #: Write one ledger row per tool call. Only overhead benchmarks and debugging turn this off.
    ledger_enabled: bool = True
    #: How often the server runs ledger retention and artifact GC while it is up.
    maintenance_interval_sec: int = Field(default=3600, ge=1, le=30 * 86_400)


class CustomTestRunner(_Section):
    """A file pattern run by a command template (§11.5 ``custom``); ``{path}`` is the repo-relative file."""

    pattern: str
    runner: str
    cmd: tuple[str, ...] = Field(min_length=1)
    timeout_sec: float | None = Field(default=None, gt=0, le=_MAX_RUN_SEC)


class TestsConfig(_Section):
    workers: int | None = Field(default=None, ge=1, le=64)
    target_timeout_sec: float = Field(default=30.0, gt=0, le=_MAX_RUN_SEC)
    run_timeout_sec: float = Field(default=900.0, gt=0, le=_MAX_RUN_SEC)
    fail_fast: bool = False
    #: Explicit runner choices and options (§11.5): a language → runner name (``typescript: vitest``),
    #: or a runner → options (``pytest: {cmd: [python, -m, pytest], timeout_sec: 60}``).
    runners: dict[str, str | dict[str, Any]] = Field(default_factory=dict)
    custom: tuple[CustomTestRunner, ...] = ()
    #: Gitignore-style patterns never treated as test targets (``**/fixtures/**``).
    exclude: tuple[str, ...] = ()
    #: Re-run failed targets once; fail-then-pass is reported as ``flaky``.
    retry_failed: bool = True
    #: Runs kept for ``get_test_run`` (in memory, and in ``.codeplane/test_runs.db`` across restarts).
    keep_runs: int = Field(default=20, ge=1, le=500)
    #: Under ``PYTHONDONTWRITEBYTECODE``, Python test processes cache bytecode in ``.codeplane/pycache``
    #: rather than recompiling every module at each start (nothing is written beside the sources).
    #: False: run them with the environment exactly as it is.
    bytecode_cache: bool = True


class DocSweepConfig(_Section):
    enabled: bool = True
    auto_apply: bool = False
    min_confidence: Literal["low", "medium", "high"] = "medium"
    scan_extensions: tuple[str, ...] = (".md", ".rst", ".adoc", ".txt")


class RefactorConfig(_Section):
    #: §8.12: switched off, the refactor tools are not served at all (not listed; called by name: 1004).
    enabled: bool = True
    plan_ttl_sec: int = Field(default=900, ge=1, le=30 * 86_400)
    doc_sweep: DocSweepConfig = Field(default_factory=DocSweepConfig)


class GitConfig(_Section):
    #: Longest a push/pull/fetch (git CLI, credentials) may run before its process group is killed.
    remote_timeout_sec: float = Field(default=300.0, gt=0, le=3600)
    #: Longest a commit hook may run; a hook that times out fails the commit.
    hook_timeout_sec: float = Field(default=300.0, gt=0, le=3600)
    #: Default cap on diff lines returned by ``git_diff``/``git_inspect show`` (callers may lower it).
    diff_max_lines: int = Field(default=2000, ge=10, le=100_000)


class LintConfig(_Section):
    #: Longest one linter may run before its process group is killed (its run is then ``timed_out``).
    timeout_sec: float = Field(default=120.0, gt=0, le=3600)
    #: Most diagnostics one ``lint_check`` keeps for its pages (sorted; the total is always counted).
    max_diagnostics: int = Field(default=5000, ge=1, le=100_000)
    #: Linters run at the same time.
    workers: int = Field(default=4, ge=1, le=32)


class ToolsConfig(_Section):
    #: Which tools the server serves (``tools/list`` and calls): ``core`` (default) the
    #: find-read-edit-test-commit loop; ``full`` every tool; ``read_only`` only tools annotated read-only.
    #: A withheld tool called by name is refused (1006). ``core`` is the default because every session pays
    #: for ``tools/list``: ``full`` costs about twice what ``core`` cost before answers were made lean.
    profile: Literal["full", "core", "read_only"] = "core"


class ObservabilityConfig(_Section):
    """Metrics, traces and the dashboard (§13). Nothing leaves the machine unless ``otlp_endpoint`` is set."""

    #: Per-call metrics and traces. Off only for overhead benchmarks (``/metrics`` then shows process
    #: metrics only and the dashboard no operations).
    enabled: bool = True
    #: OTLP/HTTP traces endpoint (e.g. ``http://127.0.0.1:4318/v1/traces``); unset: no export at all.
    otlp_endpoint: str | None = Field(default=None, pattern=r"^https?://\S+$")
    #: Extra headers for the OTLP exporter (e.g. an auth header of a collector).
    otlp_headers: dict[str, str] = Field(default_factory=dict)
    #: Finished traces kept in memory for the dashboard (the oldest are dropped).
    trace_ring_size: int = Field(default=2_000, ge=10, le=100_000)


class CodePlaneConfig(_Section):
    server: ServerConfig = Field(default_factory=ServerConfig)
    logging: LoggingConfig = Field(default_factory=LoggingConfig)
    index: IndexConfig = Field(default_factory=IndexConfig)
    mutation: MutationConfig = Field(default_factory=MutationConfig)
    tasks: TasksConfig = Field(default_factory=TasksConfig)
    tests: TestsConfig = Field(default_factory=TestsConfig)
    refactor: RefactorConfig = Field(default_factory=RefactorConfig)
    git: GitConfig = Field(default_factory=GitConfig)
    tools: ToolsConfig = Field(default_factory=ToolsConfig)
    lint: LintConfig = Field(default_factory=LintConfig)
    observability: ObservabilityConfig = Field(default_factory=ObservabilityConfig)


def global_config_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "codeplane" / "config.yaml"


class _Layers:
    """Merges nested dicts while remembering which layer set each dotted key."""

    def __init__(self) -> None:
        self.data: dict[str, Any] = {}
        self.sources: dict[str, str] = {}
        #: source -> (file, its text), for the line and column of a bad key.
        self.files: dict[str, tuple[Path, str]] = {}
        #: (dotted, value, source) of a non-mapping a later layer's mapping replaced: ``server: 5`` in a file and
        #: ``--port`` (a ``server.port`` layer) started silently while ``cpl up`` alone refused the file.
        self.replaced: list[tuple[str, Any, str]] = []

    def merge(self, values: Mapping[str, Any], source: str, prefix: str = "") -> None:
        target = self.data
        for part in [p for p in prefix.split(".") if p]:
            target = target.setdefault(part, {})
        self._merge_into(target, values, source, prefix)

    def _merge_into(self, target: dict[str, Any], values: Mapping[str, Any], source: str, prefix: str) -> None:
        for key, value in values.items():
            dotted = f"{prefix}.{key}" if prefix else str(key)
            if isinstance(value, Mapping) and not isinstance(target.get(key), dict):
                if key in target:
                    self.replaced.append((dotted, target[key], self.source_of(dotted)))
                target[key] = {}  # a new section: its keys get sources of their own, as a merged one's do
            if isinstance(value, Mapping):
                self._merge_into(target[key], value, source, dotted)
            else:
                target[key] = value
            # A section's own source is its last writer's; a key's decides where an error points (a file's
            # ``server.shutdown_timeout_sec`` was blamed on ``--port 0``, which set ``server.port``).
            self.sources[dotted] = source

    def source_of(self, dotted: str) -> str:
        parts = dotted.split(".")
        for end in range(len(parts), 0, -1):
            found = self.sources.get(".".join(parts[:end]))
            if found:
                return found
        return "defaults"


#: Characters of a refused value an error shows.
_SHOWN_VALUE = 200


def _nest(dotted: str, value: Any) -> dict[str, Any]:
    parts = dotted.split(".")
    nested: dict[str, Any] = {parts[-1]: value}
    for part in reversed(parts[:-1]):
        nested = {part: nested}
    return nested


def parse_override(text: str, source: str) -> tuple[str, Any]:
    """Parse ``section.key=value``; the value is read as YAML so ``8080`` is an int and ``true`` a bool.

    A value that is not YAML at all is taken as text; one YAML refuses in a file (a key given twice, an alias, a
    key that is not a name) is refused here too, with 2002."""
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise CodePlaneError(
            ErrorCode.CONFIG_INVALID_VALUE,
            f"override {text!r} from {source} must look like section.key=value",
            details={"source": source, "override": text},
        )
    try:
        value = yaml.load(raw, Loader=StrictLoader) if raw.strip() else ""
    except (yaml.constructor.ConstructorError, yaml.composer.ComposerError) as exc:
        problem = getattr(exc, "problem", None) or str(exc)
        raise CodePlaneError(
            ErrorCode.CONFIG_INVALID_VALUE,
            f"invalid config value for {key!r} (from {f'--set {text}' if source == '--set' else source}): {problem}",
            details={"key": key, "source": source, "reason": problem},
        ) from None
    except yaml.YAMLError:
        value = raw
    return key, value


def _leaves(dotted: str, value: Any) -> list[str]:
    """The dotted keys a value sets: ``tasks={max_mutations: 7}`` sets ``tasks.max_mutations``."""
    if isinstance(value, Mapping) and value:
        return [leaf for key, item in value.items() for leaf in _leaves(f"{dotted}.{key}", item)]
    return [dotted]


class _OneLayer:
    """The keys one layer (the environment, or the ``--set`` options) has set: README promises that a key given
    twice is an error, not last-one-wins, and two ``--set`` of one key silently kept the last."""

    def __init__(self) -> None:
        self.claimed: dict[str, str] = {}

    def claim(self, dotted: str, value: Any, source: str) -> None:
        for leaf in _leaves(dotted, value):
            earlier = next((src for key, src in self.claimed.items()
                            if key == leaf or key.startswith(f"{leaf}.") or leaf.startswith(f"{key}.")), None)
            if earlier is not None:
                raise CodePlaneError(
                    ErrorCode.CONFIG_INVALID_VALUE,
                    f"the key {leaf!r} is given twice: by {earlier} and by {source}; give it once",
                    details={"key": leaf, "source": source, "reason": "key given twice", "first_source": earlier},
                )
            self.claimed[leaf] = source


def load_config(
    repo_root: Path | None,
    *,
    overrides: Sequence[str] = (),
    environ: Mapping[str, str] | None = None,
    global_path: Path | None = None,
) -> CodePlaneConfig:
    """Build the effective config. Raises 2001/2002 naming key, value and source on bad input."""
    env = os.environ if environ is None else environ
    layers = _Layers()
    gpath = global_path or global_config_path()
    files = [(gpath, f"global config {gpath}")]
    if repo_root is not None:
        rpath = repo_root / ".codeplane" / "config.yaml"
        files.append((rpath, f"repo config {rpath}"))
    held: list[Held] = []
    for fpath, source in files:
        if fpath.exists():
            values, text = read_yaml(fpath)
            if repo_root is not None and fpath == files[-1][0]:
                values, held = hold_exposure(values, repo_root)  # a clone's file may not open the server
            layers.merge(values, source)
            layers.files[source] = (fpath, text)
    from_env = _OneLayer()
    for name in sorted(env):
        if name.startswith(ENV_PREFIX):
            dotted = name[len(ENV_PREFIX) :].lower().replace("__", ".")
            key, value = parse_override(f"{dotted}={env[name]}", f"environment variable {name}")
            from_env.claim(key, value, f"environment variable {name}")
            layers.merge(_nest(key, value), f"environment variable {name}")
    from_set = _OneLayer()
    for text in overrides:
        key, value = parse_override(text, "--set")
        from_set.claim(key, value, f"--set {text}")
        layers.merge(_nest(key, value), f"--set {text}")
    refused: list[Held] = []
    for item in held:
        if any(key == item.key or key.startswith(f"{item.key}.") for key in layers.sources):
            continue  # the user's own layers set it: theirs decides (config_exposure.py)
        if repo_root is not None and EXPOSURE[item.key].widens(item.value, repo_root):
            refused.append(item)
        else:
            layers.merge(_nest(item.key, item.value), files[-1][1])
    if refused:
        raise _exposed(layers, refused, files[-1][1], gpath)
    for dotted, value, source in layers.replaced:
        if dotted in _SECTIONS:  # a section given as a scalar is wrong whatever a later layer adds to it
            raise _problem(layers, dotted, value, source, "expected a section (key: value lines), "
                           f"got {type(value).__name__ if value is not None else 'nothing'}")
    try:
        return CodePlaneConfig.model_validate(layers.data)
    except ValidationError as exc:
        raise _invalid(exc, layers) from None


def _section_keys(model: type[BaseModel], prefix: str = "") -> set[str]:
    keys: set[str] = set()
    for name, field in model.model_fields.items():
        annotation: Any = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            keys |= {f"{prefix}{name}"} | _section_keys(annotation, f"{prefix}{name}.")
    return keys


_SECTIONS = _section_keys(CodePlaneConfig)


def _where(layers: _Layers, dotted: str, source: str, details: dict[str, Any]) -> tuple[str, str]:
    """(``file:line:col: `` prefix, `` (from source)`` suffix): a file's key is named by its place."""
    if source in layers.files:
        fpath, text = layers.files[source]
        details["file"] = str(fpath)
        found = locate(text, dotted)
        if found is not None:
            details.update(line=found[0], column=found[1])
            return f"{fpath}:{found[0]}:{found[1]}: ", ""
    return "", f" (from {source})"


def _exposed(layers: _Layers, refused: list[Held], source: str, global_path: Path) -> CodePlaneError:
    """2002 for a tracked repo file's values that would widen exposure, all of them named (the first placed by
    line and column), and where to set them instead."""
    item = refused[0]
    shown = _shown(item.value)
    env = f"{ENV_PREFIX}{item.key.upper().replace('.', '__')}"
    details: dict[str, Any] = {"key": item.key, "value": shown, "source": source, "reason": "tracked repo config",
                               "set_in": [str(global_path), env, f"--set {item.key}=..."]}
    where, origin = _where(layers, item.key, source, details)
    others = ""
    if len(refused) > 1:
        details["keys"] = [held.key for held in refused]
        others = f" (so are {', '.join(held.key for held in refused[1:])})"
    return CodePlaneError(
        ErrorCode.CONFIG_INVALID_VALUE,
        f"{where}{item.key} = {shown}{origin} is not taken from this file{others}: git tracks the file (it came "
        f"with the repository), and a setting that {EXPOSURE[item.key].what} must be your own. Set it in "
        f"{global_path}, {env} or --set {item.key}=..., or remove it from the file",
        details=details,
    )


def _shown(value: Any) -> str:
    shown = repr(value)
    if len(shown) > _SHOWN_VALUE:  # a list of thousands of items printed whole (56 MB, once)
        shown = f"{shown[:_SHOWN_VALUE]}… ({len(shown):,} characters)"
    return shown


def _problem(layers: _Layers, dotted: str, value: Any, source: str, reason: str, *, tail: str = "") -> CodePlaneError:
    shown = _shown(value)
    details: dict[str, Any] = {"key": dotted, "value": shown, "source": source, "reason": reason}
    where, origin = _where(layers, dotted, source, details)
    return CodePlaneError(
        ErrorCode.CONFIG_INVALID_VALUE,
        f"{where}invalid config value for {dotted!r} = {shown}{origin}: {reason}{tail}",
        details=details,
    )


def _walk(data: Any, loc: Sequence[int | str]) -> tuple[str, Any]:
    """The dotted key and value pydantic's ``loc`` points at. List indices are left out of the key, and so are
    the union-member tags pydantic appends below a value (``tests.runners.pytest.str`` for ``pytest: 5``)."""
    parts: list[str] = []
    node: Any = data
    for part in loc:
        if isinstance(part, int) and isinstance(node, list | tuple) and -len(node) <= part < len(node):
            node = node[part]
        elif isinstance(node, Mapping):
            parts.append(str(part))
            node = node.get(part)
        elif not isinstance(part, int):
            break  # below a scalar: a union member's tag, not a key
    return ".".join(parts), node


def _env_meant(source: str) -> str | None:
    """``CODEPLANE__TASKS__MAX__MUTATIONS`` meant ``tasks.max_mutations``: a ``__`` written for a ``_``."""
    name = source.removeprefix("environment variable ")
    if name == source or not name.startswith(ENV_PREFIX):
        return None
    parts = name[len(ENV_PREFIX):].lower().split("__")
    known = set(known_keys(CodePlaneConfig))
    for joins in range(1 << max(len(parts) - 1, 0)):
        dotted = parts[0]
        for index, part in enumerate(parts[1:]):
            dotted += ("_" if joins >> index & 1 else ".") + part
        if joins and dotted in known:
            return dotted
    return None


def _invalid(exc: ValidationError, layers: _Layers) -> CodePlaneError:
    """2002 for the first problem: key, value, source, and for a file its line and column."""
    first = exc.errors()[0]
    dotted, value = _walk(layers.data, first["loc"])
    source = layers.source_of(dotted)
    more = len(exc.errors()) - 1
    tail = f" ({more} more problem{'s' if more > 1 else ''} after this one)" if more else ""
    if first["type"] != "extra_forbidden":
        return _problem(layers, dotted, value, source, first["msg"], tail=tail)
    details: dict[str, Any] = {"key": dotted, "value": _shown(value), "source": source}
    where, origin = _where(layers, dotted, source, details)
    meant = _env_meant(source) or suggest(dotted, known_keys(CodePlaneConfig))
    hint = f" (did you mean {meant}?)" if meant else ""
    details.update(reason="unknown key", suggestion=meant)
    return CodePlaneError(
        ErrorCode.CONFIG_INVALID_VALUE,
        f"{where}unknown key {dotted!r}{hint}{origin}{tail}",
        details=details,
    )
