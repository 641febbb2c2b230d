"""The encoder thread and its queue: every request shares its rounds."""
