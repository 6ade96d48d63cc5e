"""The operator CLI ``cpl`` (spec §4.2). Not agent-facing; every command has ``--json``."""
