"""CodePlane: a repository control plane for AI coding agents."""

from codeplane.core.own_bytecode import install as _cache_own_bytecode

__version__ = "0.1.0"
#: The MCP/REST API version reported by ``/status`` (spec §23.11).
API_VERSION = "0.1.0"

# First thing any CodePlane process does (the CLI, the index's forkserver workers): where PYTHONDONTWRITEBYTECODE
# holds, its own modules are otherwise compiled again by every process (core/own_bytecode.py).
_cache_own_bytecode()
