"""testing subsystem (see ARCHITECTURE.md)."""
