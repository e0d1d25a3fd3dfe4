"""How long reading a GGUF file's metadata takes for a large vocabulary (webapp/tokenizer/formats/gguf.py).

    .venv/bin/python benchmarks/bench_gguf_metadata.py [TOKENS]

Writes a vocab-only file with the gguf package's own writer (TOKENS random tokens of 1-16 characters,
their scores and types, TOKENS merges, a chat template; 200,000 by default), then reads its bytes with
`read_metadata`, best of 5. It prints the metadata's size and milliseconds; they depend on the
machine's load.
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import gguf  # noqa: E402

from webapp.tokenizer.formats.gguf import read_metadata  # noqa: E402

LETTERS = "abcdefghijklmnopqrstuvwxyzĠé漢"


def write_vocab(path: Path, tokens: int, rnd: random.Random) -> None:
    vocab = [f"{i}{''.join(rnd.choices(LETTERS, k=rnd.randint(0, 15)))}" for i in range(tokens)]
    writer = gguf.GGUFWriter(path, "llama")
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("llama-bpe")
    writer.add_token_list(vocab)
    writer.add_token_scores([rnd.uniform(-20.0, 0.0) for _ in vocab])
    writer.add_token_types([gguf.TokenType.NORMAL] * tokens)
    writer.add_token_merges([f"{rnd.choice(vocab)} {rnd.choice(vocab)}" for _ in range(tokens)])
    writer.add_bos_token_id(1)
    writer.add_add_bos_token(True)
    writer.add_chat_template("{% for m in messages %}{{ m.content }}{% endfor %}")
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    writer.close()


def main() -> None:
    tokens = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "vocab.gguf"
        write_vocab(path, tokens, random.Random(0))
        data = path.read_bytes()
    times = []
    for _ in range(5):
        started = time.perf_counter()
        metadata = read_metadata(data)
        times.append(time.perf_counter() - started)
    assert len(metadata.values[gguf.Keys.Tokenizer.LIST]) == tokens
    print(f"{tokens:,} tokens + scores + types + {tokens:,} merges: {metadata.metadata_bytes:,} bytes of metadata, "
          f"read in {min(times) * 1000:.0f} ms (best of 5; all: {', '.join(f'{t * 1000:.0f}' for t in times)} ms)")


if __name__ == "__main__":
    main()
