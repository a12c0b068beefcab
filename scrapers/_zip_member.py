"""A zip member unpacked under a cap whatever its compression method (helper of
`scrapers/epoch.py`, not a source): a small zip can hold a member of gigabytes, and zipfile hands
a bzip2 or LZMA member's whole input to its decompressor without a size limit."""

from __future__ import annotations

import bz2
import lzma
import struct
import zipfile
from typing import Any

CHUNK = 1024 * 1024   # the most one read unpacks

__all__ = ["CHUNK", "Bounded"]


class Bounded:
    """A bzip2 or LZMA member's raw bytes decompressed at most `CHUNK` at a time.

    zipfile passes these methods' whole input to the decompressor without a size limit, so one
    read of a few hundred compressed bytes can allocate gigabytes before any cap is checked;
    here every call to the decompressor names `max_length`."""

    def __init__(self, raw: Any, method: int):
        self.raw = raw
        self.method = method
        self.dec: Any = bz2.BZ2Decompressor() if method == zipfile.ZIP_BZIP2 else None

    def _lzma(self) -> Any:
        head = self.raw.read(4)
        if len(head) < 4:
            raise EOFError("LZMA member shorter than its header")
        size = struct.unpack("<H", head[2:4])[0]
        props = self.raw.read(size)
        filters = [lzma._decode_filter_properties(lzma.FILTER_LZMA1, props)]   # type: ignore[attr-defined]
        return lzma.LZMADecompressor(lzma.FORMAT_RAW, filters=filters)

    def read(self, n: int) -> bytes:
        if self.dec is None:
            self.dec = self._lzma()
        while not self.dec.eof:
            data = self.raw.read(CHUNK) if self.dec.needs_input else b""
            if self.dec.needs_input and not data:
                return b""           # the raw stream ended: zipfile's own checks saw its size
            out = self.dec.decompress(data, max_length=n)
            if out:
                return bytes(out)
        return b""
