"""Tiny randomly initialised models of each supported family, built offline with ``transformers``
(2 layers, hidden size 32, a word-level tokenizer trained on a few sentences): what
``pytest --claims-model`` is tested with. No download: ``HF_HUB_OFFLINE=1``.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

CORPUS = ("Call me Ishmael. Some years ago, never mind how long precisely, having little or no money in my purse, "
          "and nothing particular to interest me on shore, I thought I would sail about a little and see the "
          "watery part of the world.")

MAX_POSITIONS = 600
"""Longer than the checks' largest N = 512 (BERT and GPT-2 have learned positions)."""


def tiny_tokenizer(encoder: bool, corpus: str = CORPUS):
    """A ``PreTrainedTokenizerFast`` over a word-level vocabulary of ``corpus`` (default :data:`CORPUS`;
    unknown words map to ``[UNK]``, so any English text tokenises to about one token per word)."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    specials = ["[UNK]", "[PAD]", "[CLS]", "[SEP]"]
    tok = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator([corpus], trainers.WordLevelTrainer(special_tokens=specials))
    kw = {"unk_token": "[UNK]", "pad_token": "[PAD]"}
    if encoder:
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", special_tokens=[("[CLS]", tok.token_to_id("[CLS]")),
                                                     ("[SEP]", tok.token_to_id("[SEP]"))])
        kw |= {"cls_token": "[CLS]", "sep_token": "[SEP]"}
    return PreTrainedTokenizerFast(tokenizer_object=tok, **kw)


def build(family: str, dest: Path, seed: int = 0, layers: int = 2, *, heads: int = 4, hidden: int = 32,
          intermediate: int | None = None, positions: int = MAX_POSITIONS, corpus: str = CORPUS) -> Path:
    """Save a randomly initialised ``family`` model ("bert", "gpt2", "llama" with 2 key/value heads for 4 query
    heads, or "gpt_neo" as an unsupported one; ``layers`` layers, hidden size 32) with its tokenizer to ``dest``; returns ``dest``.
    A "bert" may take another shape (``heads``, ``hidden``, ``intermediate`` size, default ``2 * hidden``,
    ``positions``) and vocabulary (``corpus``): the benchmarks' BERT-base and BERT-large shapes.

    Raises:
        ValueError: an unknown family.
    """
    import torch
    import transformers as tf

    torch.manual_seed(seed)
    tok = tiny_tokenizer(encoder=family == "bert", corpus=corpus)
    vocab = len(tok)
    if family == "bert":
        model = tf.BertModel(tf.BertConfig(vocab_size=vocab, hidden_size=hidden, num_hidden_layers=layers,
                                           num_attention_heads=heads, intermediate_size=intermediate or 2 * hidden,
                                           max_position_embeddings=positions))
    elif family == "gpt2":
        model = tf.GPT2LMHeadModel(tf.GPT2Config(vocab_size=vocab, n_embd=32, n_layer=layers, n_head=4,
                                                 n_positions=MAX_POSITIONS, bos_token_id=0, eos_token_id=0))
    elif family == "llama":
        model = tf.LlamaForCausalLM(tf.LlamaConfig(vocab_size=vocab, hidden_size=32, num_hidden_layers=layers,
                                                   num_attention_heads=4, num_key_value_heads=2,
                                                   intermediate_size=64, max_position_embeddings=MAX_POSITIONS))
    elif family == "gpt_neo":
        model = tf.GPTNeoModel(tf.GPTNeoConfig(vocab_size=vocab, hidden_size=32, num_layers=layers, num_heads=4,
                                               attention_types=[[["global"], layers]], max_position_embeddings=MAX_POSITIONS))
    else:
        raise ValueError(f"unknown family {family!r}")
    dest.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(dest, safe_serialization=True)
    tok.save_pretrained(dest)
    return dest


def copy_with_config(src: Path, dest: Path, **config) -> Path:
    """A copy of the model folder ``src`` at ``dest`` whose ``config.json`` has ``config`` merged in."""
    shutil.copytree(src, dest)
    if config:
        cfg = json.loads((dest / "config.json").read_text(encoding="utf-8"))
        cfg.update(config)
        (dest / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
    return dest
