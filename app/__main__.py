"""Entry point for ``python -m app``."""

from app.cli import main

main()
