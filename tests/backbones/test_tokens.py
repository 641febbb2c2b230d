"""Length-sorted batches under a count and a padded-token budget, and the local folder's tokenizer."""

from app.backbones.tokens import Tokenizer, default_model_path, length_batches


def test_length_batches_respect_count_and_token_budget():
    lengths = [5, 100, 7, 60, 6, 100, 8, 9]
    batches = length_batches(lengths, max_texts=3, max_tokens=200)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    for batch in batches:
        assert len(batch) <= 3 and len(batch) * max(lengths[i] for i in batch) <= 200
        assert [lengths[i] for i in batch] == sorted(lengths[i] for i in batch)
    assert length_batches([500], max_texts=4, max_tokens=100) == [[0]]  # one text over budget goes alone


def test_the_tokenizer_cuts_where_the_pooling_does_and_counts_whole_texts():
    tokenizer = Tokenizer(default_model_path(), max_length=8)
    text = "one two three four five six seven eight nine"
    assert tokenizer.counts([text, "hi"]) == [11, 3]  # nine words, [CLS] and [SEP]; whole, before any cut
    (tokens,), (ids,) = tokenizer.tokens([text]), tokenizer.ids([text])
    assert tokens == ["[CLS]", "one", "two", "three", "four", "five", "six", "[SEP]"] and len(ids) == 8
    features = tokenizer.features([text, "hi"])
    assert [len(row) for row in features["input_ids"]] == [8, 3] and features["attention_mask"][1] == [1, 1, 1]
