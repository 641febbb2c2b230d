"""The services one process runs, each one job: embedding, documents, search; and their wiring."""
