import gc

# Paused before the CLI's imports: see codeplane.cli.main.pause_collector_for_startup.
gc.disable()

from codeplane.cli.main import app  # noqa: E402 - after the collector is paused

app()
