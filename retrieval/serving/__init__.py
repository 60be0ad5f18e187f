"""``retrieval serve``: the workers behind Caddy, the access policy, the data roots and the uploads. The proxy's
configuration and the worker process are the server's own."""

__all__ = ["access", "roots", "serve", "uploads"]
