"""The engine gateway: outside engines play arena matches over the Kalah Game Protocol (KGP 1.1.0 freeplay)."""
