"""The front: request routing, admission, metrics, moderation, the web pages, the gateway for outside engines."""
