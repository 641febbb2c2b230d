"""The tiny folders are what a user's would be: saved by sentence-transformers, read back by it, each recipe's own."""

from app.benchmarks.model_folders import RECIPES, Recipe, build, texts


def test_texts_run_from_a_few_tokens_to_past_every_limit():
    lengths = [len(t.split()) for t in texts()]
    assert min(lengths) == 1 and max(lengths) >= 1000 > max(r.max_length for r in RECIPES)


def test_a_built_folder_loads_in_sentence_transformers_as_its_recipe_says(tmp_path):
    from sentence_transformers import SentenceTransformer

    folder = build(Recipe("distilbert", "max", True, True, 128), tmp_path)
    model = SentenceTransformer(str(folder))
    assert model.max_seq_length == 128 and model.get_sentence_embedding_dimension() == 16
    assert model.prompts == {"query": "query: ", "document": "passage: "}
