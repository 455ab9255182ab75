"""The shared-memory regions a server holds, as the client describes them (Client's
register_*_shared_memory, list_shared_memory)."""

from __future__ import annotations

import dataclasses
import os

from gpureduce.v1 import reduce_pb2


@dataclasses.dataclass
class Region:
    """A registered shared-memory region, as the server describes it."""

    name: str
    kind: str               # "system" or "cuda"
    key: str                # system: the POSIX shared-memory object's name ("/...")
    device_id: int          # cuda: the device; system: -1
    offset: int             # where the region starts in the object (or the allocation)
    byte_size: int
    requests_in_flight: int
    register_us: float      # what registering it cost the server (mapping, pinning, opening)
    writable: bool = False  # system: the server may write results into it (out=)

    @classmethod
    def from_message(cls, message) -> "Region":
        kind = {reduce_pb2.SharedMemoryRegion.SYSTEM: "system",
                reduce_pb2.SharedMemoryRegion.CUDA: "cuda"}.get(message.kind, "unspecified")
        return cls(name=message.name, kind=kind, key=message.key, device_id=message.device_id,
                   offset=message.offset, byte_size=message.byte_size,
                   requests_in_flight=message.requests_in_flight,
                   register_us=message.register_us, writable=message.writable)


class RegionList(list):
    """The registered regions (a list of Region) and the server's limits on them."""

    def __init__(self, regions, max_regions: int, max_total_bytes: int, total_bytes: int):
        super().__init__(regions)
        self.max_regions = max_regions
        self.max_total_bytes = max_total_bytes
        self.total_bytes = total_bytes


def object_bytes(key: str) -> int:
    """The size of POSIX shared-memory object `key` ("/name"), which Linux keeps in /dev/shm."""
    if not key.startswith("/") or "/" in key[1:] or key in ("/", "/.", "/.."):
        raise ValueError(f"{key!r} is not a POSIX shared-memory name (\"/\" and a name)")
    return os.stat("/dev/shm" + key).st_size
