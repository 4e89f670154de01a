"""Tournaments with no I/O: Swiss, arena and round-robin pairing, the event state machine, standings and records."""
