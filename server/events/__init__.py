"""Tournaments with no I/O: event settings, Swiss, arena and round-robin pairing, standings and records."""
