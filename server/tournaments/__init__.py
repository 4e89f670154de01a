"""Tournaments with no I/O: Swiss, arena and round-robin pairing, the state machine, standings and records."""
