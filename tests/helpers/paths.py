"""Where the project is, for tests in any folder under tests/."""

from __future__ import annotations

from pathlib import Path

ROOT_DIR = Path(__file__).resolve().parents[2]
"""The project's root (the folder of pyproject.toml)."""
