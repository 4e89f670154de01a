"""The `kalah` command line: one subcommand module each, loaded on demand."""
