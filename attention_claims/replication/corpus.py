"""The replications' corpus: real English text that is on every machine with Python 3.11, offline.

The text is CPython's own documentation shipped with the interpreter (3.11 here; the device machine's
3.12 gives another corpus, named and hashed as such): every docstring (module, class,
function) of the standard library's ``.py`` files (``test``, ``idlelib``, ``site-packages`` and
``lib2to3`` excluded) and every entry of :mod:`pydoc_data.topics` (the language reference's topics).
Documents are split into train and eval by the SHA-256 of their name (about 10 % eval), so the split
does not depend on the file system's order. The SHA-256 of the joined text is the corpus's name in
every result file; a different Python build gives a different hash, and the evidence says so.

Tokens: a byte-level BPE vocabulary (``tokenizers``, Hugging Face) trained on the train split only.
Token arrays are cached under ``<cache root>/evidence/`` keyed by the corpus hash and vocabulary size.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from attention_claims import _files
from attention_claims._cache import cache_dir, write_atomic

__all__ = ["Corpus", "load_corpus", "documents"]

_EXCLUDE = {"test", "idlelib", "site-packages", "lib2to3", "tkinter", "turtledemo", "ensurepip"}


@functools.cache
def documents() -> list[tuple[str, str]]:
    """``(name, text)`` for every docstring of the standard library and every pydoc topic, sorted by name.

    Another Python version gives another corpus: its name (:meth:`Corpus.describe`) says which version, and
    its SHA-256 differs, so evidence from two versions is never mistaken for one configuration."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    docs: list[tuple[str, str]] = []
    for path in sorted(stdlib.rglob("*.py")):
        rel = path.relative_to(stdlib)
        if _EXCLUDE.intersection(rel.parts):
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                text = ast.get_docstring(node, clean=True)
                if text and len(text) >= 40:
                    where = getattr(node, "name", "<module>")
                    docs.append((f"{rel.as_posix()}:{getattr(node, 'lineno', 0)}:{where}", text))
    from pydoc_data.topics import topics

    docs.extend((f"pydoc_data.topics:{key}", text) for key, text in sorted(topics.items()))
    docs.sort()
    return docs


@dataclass(frozen=True)
class Corpus:
    """Token ids of the train and eval splits (``np.int32``, 1-d), the vocabulary and the provenance."""

    train: np.ndarray
    eval: np.ndarray
    vocab_size: int
    sha256: str
    tokenizer_sha256: str
    documents: int
    mask_id: int
    unigram_entropy: float
    """Cross-entropy (nats) of the eval tokens under the train split's unigram distribution (add-one
    smoothed): the plateau a model that ignores context sits on."""

    def describe(self) -> dict:
        """The provenance written into every result file."""
        return {"name": f"CPython {sys.version_info[0]}.{sys.version_info[1]} standard-library docstrings + pydoc_data.topics",
                "sha256": self.sha256, "documents": self.documents, "train_tokens": int(self.train.size),
                "eval_tokens": int(self.eval.size), "tokenizer": f"byte-level BPE ({self.vocab_size})",
                "tokenizer_sha256": self.tokenizer_sha256,
                "unigram_entropy_nats": round(self.unigram_entropy, 4)}


def load_corpus(vocab_size: int = 4096) -> Corpus:
    """Build (or read from the cache) the tokenised corpus with a ``vocab_size`` BPE vocabulary."""
    docs = documents()
    joined = "\n\x00\n".join(f"{name}\n{text}" for name, text in docs).encode()
    digest = hashlib.sha256(joined).hexdigest()
    folder = cache_dir("evidence")
    stem = folder / f"corpus-{digest[:16]}-{vocab_size}"
    npz, tok_path = stem.with_suffix(".npz"), stem.with_suffix(".tokenizer.json")
    if not (npz.exists() and tok_path.exists()):
        from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

        split = [int(hashlib.sha256(name.encode()).hexdigest(), 16) % 10 == 0 for name, _ in docs]
        train_texts = [t for (_, t), e in zip(docs, split, strict=True) if not e]
        eval_texts = [t for (_, t), e in zip(docs, split, strict=True) if e]
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=["[MASK]", "[SEP]"],
                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
        tok.train_from_iterator(train_texts, trainer=trainer)
        sep = tok.token_to_id("[SEP]")

        def encode(texts):
            ids: list[int] = []
            for enc in tok.encode_batch(texts):
                ids.extend(enc.ids)
                ids.append(sep)
            return np.asarray(ids, dtype=np.int32)

        arrays = {"train": encode(train_texts), "eval": encode(eval_texts)}
        import io

        buf = io.BytesIO()
        np.savez(buf, **arrays)
        write_atomic(npz, buf.getvalue())
        write_atomic(tok_path, tok.to_str())
    with np.load(npz) as data:
        train, eval_ = data["train"], data["eval"]
    tok_text = _files.read_text(tok_path, 64 << 20)  # the package's one reader (a FIFO is not waited on)
    vocab = json.loads(tok_text)["model"]["vocab"]
    counts = np.bincount(train, minlength=vocab_size).astype(np.float64) + 1.0
    logp = np.log(counts / counts.sum())
    unigram = float(-logp[eval_].mean())
    return Corpus(train=train, eval=eval_, vocab_size=vocab_size, sha256=digest,
                  tokenizer_sha256=hashlib.sha256(tok_text.encode()).hexdigest(), documents=len(docs),
                  mask_id=int(vocab["[MASK]"]), unigram_entropy=unigram)
