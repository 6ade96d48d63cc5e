"""CodePlane: a repository control plane for AI coding agents."""

__version__ = "0.1.0"
#: The MCP/REST API version reported by ``/status`` (spec §23.11).
API_VERSION = "0.1.0"
