"""Renames of C++ class members in real code, judged by ``g++`` and by the program's output.

Source: ``pocketfft_hdronly.h``, the header-only FFT library NumPy vendors, from the pinned NumPy 2.1.3 sdist
(``_common.sdist``, cached under ``benchmarks/.cache``; never committed). It is a C++11 header of class templates
(``cfftp``, ``rfftp``, ``fftblue``, ``pocketfft_c``...) whose methods use their members unqualified: two classes
have a ``fact``, a ``twsize``, a ``factorize`` each, and methods have locals named like members of other classes.
tree-sitter-cpp parses it with 94 errors (``POCKETFFT_NOINLINE``/``POCKETFFT_RESTRICT`` macros: ``fftblue``'s
constructor read as a field whose member initialisers were methods, and the classes after it lost their
namespaces); the index parses it again with those macros blanked (4 errors left, ``extract._parsed``).

Result (bf60ab6 + the all-at-once repair, 2 cores): 12/12 build and print the untouched copy's checksum, 111/111
applied edits high, 179 low candidates (other classes' members and locals of the same name) listed and not
applied, 0 unlisted, 0 left. Before the C++ class scopes (be6c0fe): 0/12 built (13 high edits, the definitions);
with the class scopes but not the macro repair, 11/12 (``fftblue.n2`` ambiguous).

Each case renames one field or method on a fresh copy (a git repo in a temp dir holding the header and a small
driver, ``main.cpp``, that runs a complex and a real transform through the public API and prints a checksum),
through CodePlane's index and refactor service in process, applies the default selection (high + medium) and
judges it: ``g++ -std=c++17`` must build it and the program must print the untouched copy's checksum.
"No silent misses" is checked from outside (``_rename_listing.py``): every whole-word occurrence of the old name
must be on a line where the plan lists an edit (``unlisted``), and after apply the occurrences left must be the
listed edits not applied (``left``); the other classes' members of the same name are such listed, unapplied
(``low``, ``other_binding``) edits.

    uv run python benchmarks/rename_cpp.py [--limit N]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
from pathlib import Path

from _common import require, sdist
from _refactor_session import commit_base
from _rename_judged import run_all

HEADER = "pocketfft_hdronly.h"
DRIVER = """#include "pocketfft_hdronly.h"
#include <complex>
#include <cstdio>
#include <vector>
int main() {
  using namespace pocketfft;
  double sum = 0;
  for (size_t n : {60, 97, 128, 210}) {  // 97 is prime: Bluestein's algorithm (fftblue)
    std::vector<std::complex<double>> in(n), out(n);
    std::vector<double> rin(n);
    std::vector<std::complex<double>> rout(n / 2 + 1);
    for (size_t i = 0; i < n; ++i) {
      in[i] = {double(i % 7), double(i % 3)};
      rin[i] = double((i * 5) % 11);
    }
    shape_t shape{n};
    stride_t cstride{sizeof(std::complex<double>)}, rstride{sizeof(double)};
    c2c(shape, cstride, cstride, {0}, FORWARD, in.data(), out.data(), 1.0);
    r2c(shape, rstride, cstride, 0, FORWARD, rin.data(), rout.data(), 1.0);
    for (auto &c : out) sum += std::abs(c);
    for (auto &c : rout) sum += std::abs(c);
  }
  std::printf("%.6f\\n", sum);
}
"""
#: (qualified name, new name, kind): members used unqualified in their class's methods, several of them named
#: like another class's member.
CASES = [
    ("pocketfft.detail.cfftp.fact", "factors", "field"),
    ("pocketfft.detail.cfftp.twsize", "twiddle_size", "method"),
    ("pocketfft.detail.cfftp.factorize", "find_factors", "method"),
    ("pocketfft.detail.cfftp.pass_all", "run_passes", "method"),
    ("pocketfft.detail.cfftp.comp_twiddle", "compute_twiddle", "method"),
    ("pocketfft.detail.cfftp.length", "size_", "field"),
    ("pocketfft.detail.rfftp.fact", "factors", "field"),
    ("pocketfft.detail.rfftp.copy_and_norm", "copy_normalized", "method"),
    ("pocketfft.detail.rfftp.mem", "storage", "field"),
    ("pocketfft.detail.pocketfft_c.packplan", "pack_plan", "field"),
    ("pocketfft.detail.pocketfft_r.blueplan", "blue_plan", "field"),
    ("pocketfft.detail.fftblue.n2", "padded", "field"),
]


def _checkout(header: Path, into: Path) -> Path:
    root = into / "repo"
    root.mkdir()
    shutil.copy(header, root / HEADER)
    (root / HEADER).chmod(0o644)
    (root / "main.cpp").write_text(DRIVER, encoding="utf-8")
    return commit_base(root)


def _build_and_run(root: Path) -> tuple[bool, str]:
    """(builds, the program's output or the first compiler error)."""
    built = subprocess.run(["g++", "-O0", "-std=c++17", "-pthread", "-o", "prog", "main.cpp"], cwd=root,
                           capture_output=True, text=True, check=False)
    if built.returncode:
        first = next((line for line in built.stderr.splitlines() if "error" in line), "failed")
        return False, first.strip()
    ran = subprocess.run(["./prog"], cwd=root, capture_output=True, text=True, timeout=120, check=False)
    return True, ran.stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=0)
    args = parser.parse_args()
    require("g++")
    header = sdist("numpy", "2.1.3") / "numpy" / "fft" / "pocketfft" / HEADER
    cases = CASES[:args.limit] if args.limit else CASES
    run_all("Renames of C++ members in NumPy 2.1.3's pocketfft_hdronly.h (g++ builds the driver; its output must "
            "match the untouched copy's)", "cpp", cases, lambda into: _checkout(header, into), _build_and_run)


if __name__ == "__main__":
    main()
