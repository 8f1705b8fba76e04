"""Agents bundled with the workbench."""
