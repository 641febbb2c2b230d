"""The published schema says what this server enforces: marked keywords filled from the settings, exclusive forms
as a oneOf, a JSON query parameter as OpenAPI content."""

from __future__ import annotations

import json

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


def test_the_published_schema_states_the_limits_this_server_enforces(client):
    schema = client.get("/openapi.json").json()
    assert "x-served" not in json.dumps(schema)
    bodies = schema["components"]["schemas"]
    texts = bodies["EmbedRequest"]["properties"]["texts"]
    assert (texts["maxItems"], texts["items"]["maxLength"]) == (8, 200)  # CE_MAX_TEXTS, CE_MAX_TEXT_CHARS here
    k = next(p for p in schema["paths"]["/search"]["get"]["parameters"] if p["name"] == "k")
    assert k["schema"]["maximum"] == 20 and bodies["SearchRequest"]["properties"]["k"]["maximum"] == 20
    collection = bodies["CollectionIn"]["properties"]
    assert collection["backbone"]["anyOf"] == [{"type": "string", "enum": ["hashing"]}, {"type": "null"}]
    assert collection["model_path"]["anyOf"] == [{"type": "null"}]  # CE_COLLECTION_MODELS is empty
    assert collection["shards"]["maximum"] == 16  # CE_MAX_COLLECTION_SHARDS
    forms = [sorted(f["required"]) for f in bodies["SimilarityRequest"]["oneOf"]]
    assert forms == [["pairs"], ["source", "targets"]]
    assert [f["properties"]["method"].get("const") for f in bodies["FitRequest"]["oneOf"]] == [
        None,
        "whitening",
        "abtt",
    ]
    # ...and the server refuses what the schema leaves out.
    assert client.post("/embed", json={"texts": ["a"] * 9}).status_code == 422
    assert client.get("/search", params={"q": "a", "k": 21}).status_code == 422
    both = {"pairs": [["a", "b"]], "source": "a", "targets": ["b"]}
    assert client.post("/similarity", json=both).status_code == 422
    assert client.post("/collections", json={"name": "y", "shards": 17}).status_code == 422
    assert client.post("/collections", json={"name": "x", "pooling": "cls"}).status_code == 201
    assert client.post("/collections/x/fit", json={"method": "center", "alpha": 0.5}).status_code == 422
