"""Build tiny transformers models with random weights, offline, for tests and benchmarks.

Tokenizers are trained here with the `tokenizers` library on text written below, wrapped
as transformers fast tokenizers and saved with the model, so everything loads back
through the real `from_pretrained` path. Weights are random: tests assert mechanics
(shapes, batching, chunking, mapping), never what a model "believes".
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

CORPUS = """
A randomized trial in 2019 enrolled 412 adults with mild hypertension across three
clinics. Participants who reduced their salt intake showed lower blood pressure after
six months, although the effect was smaller in older patients. The authors caution that
the study was not designed to measure heart attacks or strokes, and that adherence was
self reported. A cohort study from Denmark followed nurses for twelve years and found
that night shifts were associated with a higher risk of diabetes; it did not establish
that the shifts caused the disease. The city council approved the budget in March 2021
by a vote of seven to two. The new bridge, first proposed in 1998, is expected to open
in 2027 if funding holds. Engineers estimate the cost at between 40 and 55 million
dollars. Critics argue the estimate may rise because steel prices have increased. In
the archive, letters from the governor suggest that the treaty was signed reluctantly
and that several provinces objected. Historians disagree about whether the treaty
ended the war or merely paused it. The court held that the contract was void because
one party lacked capacity, but it did not rule on damages. The appeal is pending. A
survey of 1,200 households reported that most families spend less on energy than a
decade ago, though prices in rural areas remain high. Researchers measured soil carbon
at forty sites and observed modest gains where cover crops were planted for at least
five seasons. The quick brown fox jumps over the lazy dog while the cat sleeps in the
warm sun near the old stone wall. Early results suggest the vaccine may reduce severe
illness in children, but the trial is ongoing and the final analysis is due next year.
Quarterly revenue rose eight percent, driven by software subscriptions, while hardware
sales fell. The company expects growth to slow and has paused hiring in two regions.
"""

WORDS = sorted(set(CORPUS.lower().replace(",", " ").replace(".", " ").replace(";", " ").split()))

CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
NLI_LABELS = {0: "ENTAILMENT", 1: "NEUTRAL", 2: "CONTRADICTION"}


def sentences(text: str = CORPUS) -> list[str]:
    return [s.strip() + "." for s in " ".join(text.split()).split(".") if s.strip()]


def synthetic_text(rng: random.Random, n_words: int, words: list[str] | None = None) -> str:
    """Sentence-like text of `n_words` words drawn from `words` (default: the corpus)."""
    pool = words or WORDS
    out: list[str] = []
    while len(out) < n_words:
        k = min(rng.randint(6, 16), n_words - len(out))
        sentence = [rng.choice(pool) for _ in range(k)]
        sentence[0] = sentence[0].capitalize()
        sentence[-1] += "."
        out.extend(sentence)
    return " ".join(out)


BERT_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def wordpiece_tokenizer(texts: list[str], vocab_size: int = 400) -> Any:
    """A BERT-style WordPiece tokenizer ([CLS] A [SEP] B [SEP], token types), trained here.

    The trainer is not deterministic across processes (its vocabulary and ids vary);
    `word_tokenizer` is, where a test needs the same token ids every time."""
    from tokenizers import Tokenizer, models
    from tokenizers.trainers import WordPieceTrainer

    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    trainer = WordPieceTrainer(
        vocab_size=vocab_size, special_tokens=BERT_SPECIALS, show_progress=False
    )
    return _bert_tokenizer(tok, train=lambda t: t.train_from_iterator(texts, trainer))


def word_tokenizer(words: list[str] | None = None) -> Any:
    """A BERT-style tokenizer whose vocabulary is the special tokens then `words`
    (default: the corpus words) in sorted order: the same ids in every process."""
    from tokenizers import Tokenizer, models

    vocab = {t: i for i, t in enumerate([*BERT_SPECIALS, *sorted(set(words or WORDS))])}
    return _bert_tokenizer(Tokenizer(models.WordPiece(vocab, unk_token="[UNK]")))


def _bert_tokenizer(tok: Any, train: Any = None) -> Any:
    """Lower-casing, BERT pre-tokenising and the [CLS] A [SEP] B [SEP] template around a
    WordPiece model (trained by `train` when given), as a transformers fast tokenizer."""
    from tokenizers import decoders, normalizers, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    if train is not None:
        train(tok)
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls), ("[SEP]", sep)],
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        pad_token="[PAD]",
        unk_token="[UNK]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
        model_input_names=["input_ids", "token_type_ids", "attention_mask"],
    )


def save_nli_model(
    directory: Path,
    tokenizer: Any,
    *,
    id2label: dict[int, str] | None = None,
    classifier_bias: list[float] | None = None,
    classifier_scale: float | None = None,
    initializer_range: float = 0.02,
    hidden_size: int = 32,
    num_hidden_layers: int = 2,
    num_attention_heads: int = 2,
    intermediate_size: int = 64,
    max_position_embeddings: int = 512,
    seed: int = 0,
) -> Path:
    """A random BertForSequenceClassification saved with its tokenizer.

    `classifier_bias` zeroes the classifier weights and sets its bias, so every input
    gets exactly softmax(bias): a model whose prediction the test knows.
    `classifier_scale` multiplies the classifier weights and `initializer_range` sets
    the random weights' spread (transformers' default 0.02 gives every input nearly the
    same logit; a reranker test wants them spread over a few units).
    """
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    labels = NLI_LABELS if id2label is None else id2label
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        num_hidden_layers=num_hidden_layers,
        num_attention_heads=num_attention_heads,
        intermediate_size=intermediate_size,
        max_position_embeddings=max_position_embeddings,
        num_labels=len(labels),
        id2label=labels,
        label2id={v: k for k, v in labels.items()},
        pad_token_id=tokenizer.pad_token_id,
        initializer_range=initializer_range,
    )
    torch.manual_seed(seed)
    model = BertForSequenceClassification(config).eval()
    if classifier_bias is not None:
        with torch.no_grad():
            model.classifier.weight.zero_()
            model.classifier.bias.copy_(torch.tensor(classifier_bias))
    if classifier_scale is not None:
        with torch.no_grad():
            model.classifier.weight.mul_(classifier_scale)
    directory.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def save_reranker(
    directory: Path, tokenizer: Any, *, scale: float = 4.0, seed: int = 0, **kwargs: Any
) -> Path:
    """A random one-output BertForSequenceClassification: a cross-encoder reranker
    (`hf-ce/<dir>`) whose logits differ between inputs by a few units."""
    return save_nli_model(
        directory,
        tokenizer,
        id2label={0: "LABEL_0"},
        classifier_scale=scale,
        initializer_range=0.2,
        seed=seed,
        **kwargs,
    )


def save_encoder(directory: Path, *, seed: int = 0) -> Path:
    """A random two-layer BertModel with a wordpiece tokenizer over the corpus: a dense
    embedder (`dense_model = "<dir>"`) small enough to load in a test."""
    import torch
    from transformers import BertConfig, BertModel

    tokenizer = wordpiece_tokenizer(sentences() * 3, vocab_size=300)
    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
    )
    BertModel(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


CHAT_SPECIALS = ["<pad>", "<unk>", "<eos>", "<bos>", "<|system|>", "<|user|>"]
CHAT_SPECIALS += ["<|assistant|>", "<|end|>"]


def chat_tokenizer(texts: list[str], *, chat_template: str | None = CHAT_TEMPLATE) -> Any:
    """A word-level tokenizer with chat role markers and (optionally) a chat template."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers
    from tokenizers.trainers import WordLevelTrainer
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.WordLevel(unk_token="<unk>"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator(texts, WordLevelTrainer(special_tokens=CHAT_SPECIALS))
    wrapped = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        pad_token="<pad>",
        unk_token="<unk>",
        eos_token="<eos>",
        bos_token="<bos>",
        additional_special_tokens=CHAT_SPECIALS[4:],
    )
    if chat_template is not None:
        wrapped.chat_template = chat_template
    return wrapped


def save_causal_lm(
    directory: Path,
    tokenizer: Any,
    *,
    eos_bias: float = -1e4,
    max_position_embeddings: int = 128,
    seed: int = 0,
) -> Path:
    """A random tiny PhiForCausalLM (its lm_head has a bias) saved with its tokenizer.

    Special tokens get bias -1e4, so generated text is plain corpus words; `eos_bias`
    then decides whether the model never ends (-1e4) or ends at once (+1e4).
    """
    import torch
    from transformers import PhiConfig, PhiForCausalLM

    config = PhiConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=max_position_embeddings,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=tokenizer.bos_token_id,
    )
    torch.manual_seed(seed)
    model = PhiForCausalLM(config).eval()
    with torch.no_grad():
        for token in CHAT_SPECIALS:
            model.lm_head.bias[tokenizer.convert_tokens_to_ids(token)] = -1e4
        model.lm_head.bias[tokenizer.eos_token_id] = eos_bias
    directory.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory
