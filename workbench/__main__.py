"""`python -m workbench` runs the lithify command."""

from .cli import main

main()
