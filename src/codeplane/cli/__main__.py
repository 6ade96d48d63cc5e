from codeplane.cli.main import app

app()
