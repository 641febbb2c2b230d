"""The published schema says what this server enforces: marked keywords filled from the settings, exclusive forms
as a oneOf, a JSON query parameter as OpenAPI content."""

from __future__ import annotations

from app.api.openapi import exclusive_forms, json_parameter, served, with_served_limits


def test_marks_take_the_settings_values_and_a_nullable_field_keeps_its_null():
    schema = {
        "components": {
            "texts": {"type": "array", **served(maxItems="max_texts")},
            "model_path": {"anyOf": [{"type": "string"}, {"type": "null"}], **served(enum="models")},
            "backbone": {"anyOf": [{"type": "string"}, {"type": "null"}], **served(enum="backbones")},
        }
    }
    filled = with_served_limits(schema, {"max_texts": 16, "models": [], "backbones": ["onnx"]})["components"]
    assert filled["texts"] == {"type": "array", "maxItems": 16}
    assert filled["model_path"] == {"anyOf": [{"type": "null"}]}  # no model folder served: only null is accepted
    assert filled["backbone"]["anyOf"][0] == {"type": "string", "enum": ["onnx"]}
    assert "x-served" in str(schema)  # the schema it was given is left as it was


def test_exclusive_forms_and_json_parameters():
    schema = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}, "required": []}
    exclusive_forms((["a"], [], None), (["b"], ["a"], {"a": {"const": "x"}}))(schema)
    first, second = schema["oneOf"]
    assert first == {
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "required": ["a"],
        "additionalProperties": False,
    }
    assert second["required"] == ["b"] and second["properties"]["a"] == {"type": "string", "const": "x"}
    paths = {"paths": {"/s": {"get": {"parameters": [{"name": "f", "schema": json_parameter({"type": "object"})}]}}}}
    (parameter,) = with_served_limits(paths, {})["paths"]["/s"]["get"]["parameters"]
    assert parameter == {"name": "f", "content": {"application/json": {"schema": {"type": "object"}}}}
