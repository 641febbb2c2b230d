"""Named collections: their settings in Redis, opening one off the request path, the manager of open ones,
the services wired on each, and the fits started over HTTP."""
