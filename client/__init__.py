"""The Textual client: lobby, play, spectate and replay from the terminal."""
