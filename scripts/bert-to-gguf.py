#!/usr/bin/env python3
"""Writes a sentence-transformers BERT embedding model (safetensors + tokenizer.json) as a GGUF that llama.cpp
(node-llama-cpp) runs: the same header keys, tensor names and phantom-space WordPiece vocabulary as llama.cpp's
own convert_hf_to_gguf.py (class BertModel), without the torch and transformers that script imports.

    bert-to-gguf.py <model dir> <out.gguf> <model name>

Runs where gguf (llama.cpp's GGUF library, PyPI) and safetensors are installed; fetch-model.py makes that venv.
Matrices are written as f16, vectors and the added embeddings as f32 (convert_hf_to_gguf.py --outtype f16), so the output is
byte-for-byte reproducible and fetch-model.py pins its SHA-256.
"""
import json
import sys
from pathlib import Path

import gguf
import numpy as np
from safetensors.numpy import load_file

SKIPPED = {"embeddings.position_ids", "pooler.dense.weight", "pooler.dense.bias"}


def main(model_dir: Path, out: Path, name: str) -> None:
    config = json.loads((model_dir / "config.json").read_text())
    tokenizer = json.loads((model_dir / "tokenizer.json").read_text())
    if config.get("model_type") != "bert" or tokenizer["model"]["type"] != "WordPiece":
        sys.exit("bert-to-gguf: expects a BERT model with a WordPiece tokenizer")
    blocks = config["num_hidden_layers"]
    writer = gguf.GGUFWriter(str(out), gguf.MODEL_ARCH_NAMES[gguf.MODEL_ARCH.BERT])

    writer.add_name(name)
    writer.add_context_length(config["max_position_embeddings"])
    writer.add_embedding_length(config["hidden_size"])
    writer.add_feed_forward_length(config["intermediate_size"])
    writer.add_block_count(blocks)
    writer.add_head_count(config["num_attention_heads"])
    writer.add_layer_norm_eps(config["layer_norm_eps"])
    writer.add_causal_attention(False)
    writer.add_pooling_type(pooling_of(model_dir))
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_F16)

    # Vocabulary: ids in order; added special tokens are CONTROL; "##x" continuations lose their marker and every
    # other token gets the "▁" word-start marker (llama.cpp's WPM tokenizer reads that form).
    vocab = tokenizer["model"]["vocab"]
    by_id = sorted(vocab.items(), key=lambda item: item[1])
    assert [i for _, i in by_id] == list(range(len(by_id))), "vocabulary ids must be 0..n-1"
    special = {t["content"] for t in tokenizer.get("added_tokens", []) if t.get("special")}
    tokens, types = [], []
    for token, _ in by_id:
        if token in special:
            tokens.append(token)
            types.append(gguf.TokenType.CONTROL)
        else:
            tokens.append(token[2:] if token.startswith("##") else "\u2581" + token)
            types.append(gguf.TokenType.NORMAL)
    writer.add_token_type_count(config.get("type_vocab_size", 1))
    writer.add_tokenizer_model("bert")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    gguf.SpecialVocab(model_dir, n_vocab=len(tokens)).add_to_gguf(writer)

    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.BERT, blocks)
    for name, data in sorted(load_file(str(model_dir / "model.safetensors")).items()):
        name = name.removeprefix("bert.")
        if name in SKIPPED:
            continue
        mapped = names.get_name(name, try_suffixes=(".weight", ".bias"))
        if mapped is None:
            sys.exit(f"bert-to-gguf: no GGUF name for tensor {name}")
        # Position and token-type embeddings are added to f32 activations: they stay f32, as llama.cpp's converter keeps them.
        half = data.ndim > 1 and not mapped.startswith(("position_embd", "token_types"))
        writer.add_tensor(mapped, data.astype(np.float16 if half else np.float32))

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def pooling_of(model_dir: Path) -> gguf.PoolingType:
    """sentence-transformers' pooling (1_Pooling/config.json): mean, CLS or last token."""
    path = model_dir / "1_Pooling" / "config.json"
    pooling = json.loads(path.read_text()) if path.exists() else {"pooling_mode_mean_tokens": True}
    if pooling.get("pooling_mode_mean_tokens"):
        return gguf.PoolingType.MEAN
    if pooling.get("pooling_mode_cls_token"):
        return gguf.PoolingType.CLS
    sys.exit("bert-to-gguf: unsupported pooling mode")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3])
