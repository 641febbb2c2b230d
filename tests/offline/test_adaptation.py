"""One adaptation run on a tiny random BERT: what the summary says, which tuning pairs it drops, what it writes."""

from __future__ import annotations

import itertools
import json

from transformers import AutoModel

from app.core.config import Settings
from app.offline.adapt import AdaptConfig
from app.offline.adaptation import adapt_served_model
from tests.conftest import TINY_WORDS

SENTENCES = [" ".join(words) for words in itertools.combinations(TINY_WORDS, 3)][:96]


def test_a_run_says_what_it_trained_drops_seen_pairs_and_writes_a_folder_that_loads(tiny_bert, tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(SENTENCES[:64]))
    pairs = tmp_path / "pairs.tsv"  # 20 pairs from the corpus, 12 from outside it
    rows = zip(SENTENCES[:20], SENTENCES[20:40], strict=True)
    unseen = zip(SENTENCES[64:76], SENTENCES[76:88], strict=True)
    pairs.write_text("\n".join(f"{a}\t{b}\t{i % 5}" for i, (a, b) in enumerate([*rows, *unseen])))
    config = AdaptConfig("simcse", "mean", 1, 32, 1e-3, max_length=16)
    said: list[str] = []
    settings = Settings(model_path=tiny_bert, backbone="huggingface")

    adapted = adapt_served_model(settings, corpus, config, [pairs], select="raw", keep_seen=False, say=said.append)

    assert said == ["tuning pairs: 12 scored, 20 dropped (a sentence is in the corpus)"]
    summary = adapted.summary
    assert (summary["method"], summary["views"], summary["steps"], summary["selected_on"]) == (
        "simcse",
        ["dropout"],
        2,
        "raw",
    )
    assert (summary["tuned_on"], summary["tuning_pairs"], summary["tuning_pairs_dropped"]) == ("pairs.tsv", 12, 20)
    assert [c["step"] for c in summary["checks"]] == [0, 2]
    assert "no step beat the starting model on pairs.tsv, raw (start" in adapted.refusal()
    out = tmp_path / "adapted"
    adapted.save(out)
    assert json.loads((out / "adapt.json").read_text()) == json.loads(json.dumps(summary))
    reloaded = AutoModel.from_pretrained(out, local_files_only=True)
    assert reloaded.state_dict().keys() == adapted.model.state_dict().keys()
