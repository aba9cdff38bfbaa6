"""Implementation of scripts/puzzle.py (standard library only, Python 3.8+)."""
