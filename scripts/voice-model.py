#!/usr/bin/env python3
"""Makes the speaker encoder's weights file from Resemblyzer's PyPI wheel, for `builder identify`.

    python3 scripts/voice-model.py WHEEL OUT.safetensors

Resemblyzer (Apache-2.0) ships its GE2E encoder as `resemblyzer/pretrained.pt` in PyTorch's legacy,
pre-zip serialization: a few pickles (a magic number, the format's version, the saving machine's
sizes, the checkpoint, the list of storage keys) followed by each storage's raw bytes. This reads that
stream with the standard library alone (no torch): the checkpoint's pickle may name only the few
globals a state dict needs, and its tensors are placeholders until the storages are read. It writes
the model's sixteen tensors, float32 and row-major, as a safetensors file (an 8-byte header length, a
JSON header naming each tensor's dtype, shape and byte range, then the bytes). The optimiser's state
in the checkpoint is left out. The wheel and the weights are checked against their SHA-256 first.
"""
import collections
import hashlib
import json
import pickle
import struct
import sys
import zipfile

WHEEL_SHA256 = "8f12eb2f1a9982d32e8db7856de754709b59c93a77bcf0ff536584b619a9dd1f"
WEIGHTS_SHA256 = "39373b86598fa3da9fcddee6142382efe09777e8d37dc9c0561f41f0070f134e"
MAGIC = 0x1950A86A20F9469CFC6C
PROTOCOL_VERSION = 1001


class Tensor:
    def __init__(self, storage, offset, size, stride):
        self.storage, self.offset, self.size, self.stride = storage, offset, tuple(size), tuple(stride)


def rebuild_tensor(storage, offset, size, stride, *rest):
    return Tensor(storage, offset, size, stride)


class Checkpoint(pickle.Unpickler):
    """An unpickler that builds nothing but a state dict's parts: any other global is refused."""

    def find_class(self, module, name):
        if module == "torch._utils" and name in ("_rebuild_tensor_v2", "_rebuild_tensor"):
            return rebuild_tensor
        if module == "torch" and name == "FloatStorage":
            return "float32"
        if module == "collections" and name == "OrderedDict":
            return collections.OrderedDict
        raise pickle.UnpicklingError(f"the checkpoint names {module}.{name}, which a state dict does not")

    def persistent_load(self, pid):
        kind, dtype, key, _location, numel, view = pid
        if kind != "storage" or view is not None:
            raise pickle.UnpicklingError(f"unexpected storage {pid!r}")
        return {"key": key, "dtype": dtype, "numel": numel}


def weights_of(pt):
    stream = __import__("io").BytesIO(pt)
    if pickle.load(stream) != MAGIC or pickle.load(stream) != PROTOCOL_VERSION:
        sys.exit("not PyTorch's legacy serialization")
    if not pickle.load(stream).get("little_endian"):
        sys.exit("saved big-endian")
    checkpoint = Checkpoint(stream).load()
    keys = pickle.load(stream)
    storages = {}
    for key in keys:
        (numel,) = struct.unpack("<q", stream.read(8))
        storages[key] = stream.read(numel * 4)  # every storage of this file is float32
    out = collections.OrderedDict()
    for name, tensor in checkpoint["model_state"].items():
        if name.startswith("similarity_"):
            continue  # the training loss's scale and bias, not the encoder's
        numel = 1
        for n in tensor.size:
            numel *= n
        expected = tuple(int(__import__("math").prod(tensor.size[i + 1:])) for i in range(len(tensor.size)))
        if tensor.stride != expected or tensor.storage["dtype"] != "float32":
            sys.exit(f"{name} is not a contiguous float32 tensor")
        data = storages[tensor.storage["key"]][tensor.offset * 4:(tensor.offset + numel) * 4]
        out[name] = (list(tensor.size), data)
    return out


def main():
    wheel, target = sys.argv[1], sys.argv[2]
    raw = open(wheel, "rb").read()
    if hashlib.sha256(raw).hexdigest() != WHEEL_SHA256:
        sys.exit(f"{wheel} is not Resemblyzer 0.1.4's wheel (SHA-256 differs)")
    pt = zipfile.ZipFile(wheel).read("resemblyzer/pretrained.pt")
    if hashlib.sha256(pt).hexdigest() != WEIGHTS_SHA256:
        sys.exit("resemblyzer/pretrained.pt is not the one this converter knows")
    tensors = weights_of(pt)
    header, at = {"__metadata__": {"model": "resemblyzer-ge2e", "version": "0.1.4", "weights_sha256": WEIGHTS_SHA256}}, 0
    for name, (shape, data) in tensors.items():
        header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [at, at + len(data)]}
        at += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(target, "wb") as out:
        out.write(struct.pack("<Q", len(text)))
        out.write(text)
        for _, data in tensors.values():
            out.write(data)
    print(f"{target}: {len(tensors)} tensors, {at:,} bytes of weights")


if __name__ == "__main__":
    main()
