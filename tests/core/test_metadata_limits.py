"""One rule for metadata's size wherever it is written."""

from app.core.metadata_limits import MAX_METADATA_BYTES, MAX_METADATA_KEYS, metadata_fault


def test_keys_nesting_and_size_each_have_a_bound_named_in_the_refusal():
    assert metadata_fault({"a": [1, {"b": 2}]}) is None
    assert "65 keys" in metadata_fault({f"k{i}": i for i in range(MAX_METADATA_KEYS + 1)})
    assert "nests 5 deep" in metadata_fault({"a": {"b": {"c": {"d": [1]}}}})
    assert "bytes as JSON" in metadata_fault({"a": "x" * MAX_METADATA_BYTES})
