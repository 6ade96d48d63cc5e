"""Renames in a real C library across its headers and source files, judged by ``cc`` and by the program's output.

Source: the LZ4 library (``lz4.c``/``.h``, ``lz4hc``, ``lz4frame``, ``xxhash``) vendored in the pinned ``lz4``
4.4.4 sdist from PyPI (``_common.sdist``, cached under ``benchmarks/.cache``; never committed). Its functions are
declared in headers and defined in source files, ``lz4hc.c`` and ``lz4frame.c`` call ``lz4.c``'s, ``lz4hc.c``
includes ``lz4.c`` itself for the common definitions, and macros call functions (``FORWARD_IF_ERROR``).

Each case renames one function, type, macro or struct field on a fresh copy (a git repo holding ``lz4libs/`` and
``main.c``, a driver compressing a buffer with the fast, HC and frame APIs and printing sizes and XXH32 checksums)
through CodePlane's index and refactor service in process, applies the default selection (high + medium) and judges it:
``cc`` must build all five files and the program must print the untouched copy's line. "No silent misses" is
checked from outside (``_rename_listing.py``): every whole-word occurrence of the old name must be on a line the
plan lists (``unlisted``), and after apply the occurrences left must be listed, unapplied edits (``left``; here the
deprecation messages in string literals).

Results: README (at b549ed2, 20/20; the struct fields answered SYMBOL_NOT_FOUND at 8b17773). Before C/C++ were
linked across files (f8e5ec2), every rename left the other files' prototypes and calls ``low``.

    uv run python benchmarks/rename_c.py [--limit N]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
from pathlib import Path

from _common import require, sdist
from _refactor_session import commit_base
from _rename_judged import Case, run_all

SOURCES = ("lz4.c", "lz4hc.c", "lz4frame.c", "xxhash.c")
DRIVER = r"""#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lz4.h"
#include "lz4hc.h"
#include "lz4frame.h"
#include "xxhash.h"
int main(void) {
  enum { N = 1 << 16 };
  char *src = malloc(N), *dst = malloc(LZ4_compressBound(N)), *back = malloc(N);
  for (int i = 0; i < N; ++i) src[i] = (char)("abcabcdeabcfg"[i % 13] + (i / 4096));
  int fast = LZ4_compress_default(src, dst, N, LZ4_compressBound(N));
  int restored = LZ4_decompress_safe(dst, back, fast, N);
  int hc = LZ4_compress_HC(src, dst, N, LZ4_compressBound(N), LZ4HC_CLEVEL_MAX);
  LZ4F_preferences_t prefs;
  memset(&prefs, 0, sizeof(prefs));
  prefs.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
  size_t bound = LZ4F_compressFrameBound(N, &prefs);
  char *frame = malloc(bound);
  size_t framed = LZ4F_compressFrame(frame, bound, src, N, &prefs);
  if (LZ4F_isError(framed)) return 1;
  printf("%d %d %d %d %zu %08x %08x\n", LZ4_versionNumber() > 0, fast, restored, hc, framed,
         XXH32(back, (size_t)restored, 0), XXH32(frame, framed, 1));
  return memcmp(src, back, N) != 0;
}
"""
#: Functions declared in a header and defined in a source file (several called from the other source files),
#: typedefs and macros.
CASES: list[Case] = [
    ("LZ4_compress_default", "lz4_pack", "function"),
    ("LZ4_decompress_safe", "lz4_unpack", "function"),
    ("LZ4_compressBound", "lz4_bound", "function"),
    ("LZ4_initStream", "lz4_init_stream", "function"),
    ("LZ4_saveDict", "lz4_save_dict", "function"),
    ("LZ4_compress_HC", "lz4hc_pack", "function"),
    ("LZ4_setCompressionLevel", "lz4hc_set_level", "function"),
    ("LZ4F_compressFrame", "lz4f_pack_frame", "function"),
    ("LZ4F_compressFrameBound", "lz4f_frame_bound", "function"),
    ("LZ4F_isError", "lz4f_failed", "function"),
    ("LZ4_stream_t", "lz4_stream", "type"),
    ("LZ4_streamHC_t", "lz4hc_stream", "type"),
    ("LZ4F_preferences_t", "lz4f_prefs", "type"),
    ("LZ4HC_CLEVEL_MAX", "LZ4HC_LEVEL_TOP", "macro"),
    ("LZ4_MAX_INPUT_SIZE", "LZ4_INPUT_LIMIT", "macro"),
    ("LZ4_stream_t_internal.dictSize", "dict_size", "field"),
    ("LZ4F_dctx_s.dictSize", "dict_bytes", "field"),
    ("LZ4F_cctx_s.maxBufferSize", "max_buffer_size", "field"),
    ("LZ4HC_CCtx_internal.dictLimit", "dict_limit", "field"),
    ("LZ4HC_CCtx_internal.lowLimit", "low_limit", "field"),
]


def _checkout(library: Path, into: Path) -> Path:
    root = into / "repo"
    shutil.copytree(library, root / "lz4libs")
    for file in (root / "lz4libs").iterdir():
        file.chmod(0o644)
    (root / "main.c").write_text(DRIVER, encoding="utf-8")
    return commit_base(root)


def _build_and_run(root: Path) -> tuple[bool, str]:
    """(builds, the program's output or the first compiler error)."""
    built = subprocess.run(["cc", "-O1", "-Ilz4libs", "-o", "prog", "main.c", *(f"lz4libs/{s}" for s in SOURCES)],
                           cwd=root, capture_output=True, text=True, check=False)
    if built.returncode:
        first = next((line for line in built.stderr.splitlines() if "error" in line), "failed")
        return False, first.strip()
    ran = subprocess.run(["./prog"], cwd=root, capture_output=True, text=True, timeout=120, check=False)
    return ran.returncode == 0, ran.stdout.strip() or f"exit {ran.returncode}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=0)
    args = parser.parse_args()
    require("cc")
    library = sdist("lz4", "4.4.4") / "lz4libs"
    cases = CASES[:args.limit] if args.limit else CASES
    run_all("Renames across LZ4's headers and sources (lz4 4.4.4 sdist; cc builds the driver; its output must match "
            "the untouched copy's)", "c", cases, lambda into: _checkout(library, into), _build_and_run)


if __name__ == "__main__":
    main()
