"""Correction artifacts in a real Redis: versions per backbone and the `current` pointer."""


def test_artifact_versions_and_current_pointer(store):
    assert store.artifacts.current_id("fp") is None
    store.artifacts.put("fp", "v1", b"one", make_current=True)
    store.artifacts.put("fp", "v2", b"two", make_current=False)
    assert store.artifacts.current_id("fp") == "v1"
    assert store.artifacts.get("fp", "v2") == b"two"
    assert store.artifacts.versions("fp") == ["v1", "v2"]
    assert store.artifacts.current_id("other-fp") is None
