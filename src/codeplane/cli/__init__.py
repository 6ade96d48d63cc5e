"""The operator CLI ``cpl`` (spec §4.2). Not agent-facing; every command has ``--json``."""

import gc
import os
import sys

if os.path.basename(sys.argv[0]) == "cpl":
    # The console script imports the commands before it calls ``main.app``: pause the collector here, as
    # ``python -m codeplane.cli`` does in ``__main__`` (see codeplane.cli.main.pause_collector_for_startup).
    gc.disable()

# Before the commands import their dependencies: the code the stdlib generates for them (dataclass methods, string
# annotations) is reused from earlier ``cpl`` runs (core/codegen_cache.py).
from codeplane.core.codegen_cache import install as _reuse_generated_code

_reuse_generated_code()
