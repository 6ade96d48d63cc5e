"""Reading one config file: bounded, non-blocking, and strict YAML (2001 naming file, line and column).

A config file is read by every command, ``status``/``down``/``doctor`` included, so reading it must never
hang or exhaust memory: a FIFO in its place blocked every command on ``open``, and a symlink to ``/dev/zero``
grew without limit. Only a regular file of at most :data:`MAX_CONFIG_BYTES` is read; the check is made on
the descriptor, opened with ``O_NONBLOCK`` so opening a FIFO returns at once.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Hashable
from pathlib import Path
from typing import Any

import yaml

from codeplane.core.errors import CodePlaneError, ErrorCode

#: Largest config file read. A real one is a few KiB; parsing 1 MiB already takes about half a second.
MAX_CONFIG_BYTES = 1024 * 1024

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


class StrictLoader(yaml.SafeLoader):
    """YAML's last-one-wins for a key given twice (``port: 47001`` then ``port: 47002``) hid which one was meant: a
    duplicate key is a parse error naming its line. Aliases (``*name``) are refused: nine levels of them in a
    dozen lines expand to billions of items (``status``, ``up`` and ``doctor`` hung, 3 GB and counting), and no
    setting needs one. Every config key is a name, so a key that is not text (``1: 2``, ``? [a, b]``) is refused
    here, where its line is known (a list key crashed the loader with "unhashable type")."""

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()  # type: ignore[no-untyped-call]
            raise yaml.composer.ComposerError(None, None, "aliases (*name) are not allowed in CodePlane's config: "
                                              "write the value out", event.start_mark)
        node: yaml.Node | None = super().compose_node(parent, index)
        return node

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if not isinstance(key, str) or not isinstance(key, Hashable):
                shown = repr(key) if isinstance(key_node, yaml.ScalarNode) else f"a {key_node.id}"
                raise yaml.constructor.ConstructorError(
                    "while reading a mapping", node.start_mark,
                    f"a key must be a name, not {shown} (quote it if it is one)", key_node.start_mark)
            if key in seen:
                raise yaml.constructor.ConstructorError("while reading a mapping", node.start_mark,
                                                        f"the key {key!r} is given twice", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep)


def _unreadable(path: Path, why: str) -> CodePlaneError:
    return CodePlaneError(ErrorCode.CONFIG_PARSE_ERROR, f"config file {path} cannot be read: {why}",
                          details={"source": str(path), "file": str(path)})


def read_text(path: Path) -> str:
    """The file's text; 2001 if it is not a regular file, is larger than :data:`MAX_CONFIG_BYTES`, or fails."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise _unreadable(path, str(exc)) from exc
    try:
        info = os.fstat(fd)
        kind = next((name for test, name in _KINDS if test(info.st_mode)), None)
        if kind is not None or not stat.S_ISREG(info.st_mode):
            raise _unreadable(path, f"it is {kind or 'not a regular file'}, not a regular file")
        if info.st_size > MAX_CONFIG_BYTES:
            raise _unreadable(path, f"it holds {info.st_size:,} bytes; a config file may hold at most "
                                    f"{MAX_CONFIG_BYTES:,}")
        with os.fdopen(fd, "rb", closefd=False) as stream:
            data = stream.read(MAX_CONFIG_BYTES + 1)  # the bound holds even if the file grows meanwhile
        if len(data) > MAX_CONFIG_BYTES:
            raise _unreadable(path, f"it holds more than {MAX_CONFIG_BYTES:,} bytes, the most a config file may")
        return data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise _unreadable(path, str(exc)) from exc
    finally:
        os.close(fd)


def read_yaml(path: Path) -> tuple[dict[str, Any], str]:
    """The file's top-level mapping and its text; 2001 naming file, line and column if it does not parse."""
    text = read_text(path)
    try:
        loaded = yaml.load(text, Loader=StrictLoader)  # a SafeLoader: no arbitrary objects
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark is not None else str(path)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        context = getattr(exc, "context", None)
        started = getattr(exc, "context_mark", None)
        if context and started is not None and started is not mark:
            context = f"{context} started at line {started.line + 1}, column {started.column + 1}"
        details: dict[str, Any] = {"source": str(path), "file": str(path), "problem": problem}
        if mark is not None:
            details.update(line=mark.line + 1, column=mark.column + 1)
        raise CodePlaneError(
            ErrorCode.CONFIG_PARSE_ERROR,
            f"{where}: config file is not valid YAML: {problem}{f' ({context})' if context else ''}",
            details=details,
        ) from None
    if loaded is None:
        return {}, text
    if not isinstance(loaded, dict):
        raise CodePlaneError(
            ErrorCode.CONFIG_PARSE_ERROR,
            f"{path}:1:1: config file must contain a mapping (section: keys) at the top level",
            details={"source": str(path), "file": str(path), "line": 1, "column": 1},
        )
    return loaded, text
