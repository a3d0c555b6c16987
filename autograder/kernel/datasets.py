"""The small real data sets in ``data/``, as ``torch.utils.data.Dataset`` objects.

Nothing is downloaded: each file ships with the repository (see ``data/README.md``,
which lists its provenance, licence and checksum).
"""

from __future__ import annotations

import csv
import gzip
import hashlib
from pathlib import Path

import torch
from torch.utils.data import Dataset

DATA_DIR = Path(__file__).resolve().parents[2] / "data"
DIGITS_FILE = DATA_DIR / "digits.csv.gz"
DIGITS_SHA256 = "09f66e6debdee2cd2b5ae59e0d6abbb73fc2b0e0185d2e1957e9ebb51e23aa22"


class DataFileError(RuntimeError):
    """A shipped data file is missing or not the file ``data/README.md`` describes."""


def _verified_bytes(path: Path, sha256: str) -> bytes:
    if not path.is_file():
        raise DataFileError(f"{path} is missing; it ships with the course (git checkout it).")
    raw = path.read_bytes()
    if hashlib.sha256(raw).hexdigest() != sha256:
        raise DataFileError(f"{path} does not match its checksum in data/README.md.")
    return raw


class Digits(Dataset):
    """UCI optical handwritten digits: 1,797 grey 8x8 images, labels 0-9.

    Each item is ``(image, label)``: a float32 tensor of shape (1, 8, 8) scaled to
    [0, 1] (the raw pixels count 0..16), and an int64 label.
    """

    def __init__(self, path: Path = DIGITS_FILE):
        text = gzip.decompress(_verified_bytes(path, DIGITS_SHA256)).decode("ascii")
        rows = [[int(v) for v in row] for row in csv.reader(text.splitlines()) if row]
        table = torch.tensor(rows, dtype=torch.int64)
        self.images = (table[:, :64].to(torch.float32) / 16.0).reshape(-1, 1, 8, 8)
        self.labels = table[:, 64].clone()

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, index: int) -> tuple[torch.Tensor, torch.Tensor]:
        return self.images[index], self.labels[index]
