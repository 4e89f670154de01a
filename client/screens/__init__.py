"""Screens of the Textual client."""
