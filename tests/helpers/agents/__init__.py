"""KGP agents for the engine gateway's tests: standalone scripts run as processes, and an in-process scripted client."""
