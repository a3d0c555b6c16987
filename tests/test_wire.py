"""The observation wire format: what the observer writes the judge reads back exactly, and
bytes it did not write (a learner controls the observer's process) are refused, run
nothing and reach no memory outside their tensors, also where the observer passed a
child's bytes on unread."""

from __future__ import annotations

import io
import pickle
import time

import pytest
import torch

from autograder.common import protocol, wire


def _equal_nan(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.dtype.is_floating_point or a.dtype.is_complex:
        return bool(((a == b) | (a.isnan() & b.isnan())).all())
    return torch.equal(a, b)


def _same(a, b) -> bool:
    if isinstance(a, torch.Tensor):
        return (
            type(b) is torch.Tensor
            and a.dtype == b.dtype
            and a.shape == b.shape
            and _equal_nan(a.detach().resolve_conj().cpu(), b)
        )
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and a != a:
        return b != b
    return a == b


VALUES = {
    "nan": [torch.tensor(float("nan")), torch.tensor([1.0, float("inf")])],
    "plain": {"kind": "tensor", "n": 3, "x": 1.5, "nan": float("nan"), "ok": True, "none": None},
    "containers": [(1, "a"), {"k": [1, 2, (3,)]}, {1, 2}, frozenset({"x"}), b"bytes", 2**80],
    "every_dtype": [torch.ones(2, 3, dtype=d) for d in wire.DTYPES.values()],
    "shapes": [torch.tensor(3.5), torch.empty(0, 4), torch.arange(12.0).reshape(3, 4).t()],
    "bits": [torch.tensor([1 + 2j]).conj(), torch.tensor([1.0, -2.0]).neg().resolve_neg()],
    "graph": [torch.ones(2, requires_grad=True) * 2, torch.nn.Parameter(torch.zeros(3))],
    "sparse": [torch.eye(3).to_sparse()],
    "odd_dtype": [torch.ones(2, dtype=torch.uint16)],
}


@pytest.mark.parametrize("name", list(VALUES))
def test_what_is_written_is_read_back(name):
    value = VALUES[name]
    back = wire.loads(wire.dumps(value))
    if name == "sparse":
        assert torch.equal(back[0].to_dense(), value[0].to_dense())
    else:
        assert _same(value, back), (value, back)


def test_a_container_shared_in_the_record_is_shared_when_read():
    shared = {"a": torch.ones(2)}
    back = wire.loads(wire.dumps([shared, shared]))
    assert back[0] is back[1] and torch.equal(back[0]["a"], torch.ones(2))


def test_a_read_tensor_owns_its_memory_and_can_be_changed():
    back = wire.loads(wire.dumps([torch.zeros(3), torch.zeros(3)]))
    back[0].add_(1)
    assert back[1].sum() == 0


def _record(structure: bytes, header: list | None = None, raw: bytes = b"") -> bytes:
    parts = [pickle.dumps(header or [], protocol=5), structure, b"", raw]
    return wire.MAGIC + b"".join(len(p).to_bytes(8, "little") + p for p in parts)


class _Class:
    pass


HOSTILE = {
    # a class, a function, a reduce: every name lookup is refused
    "a class": _record(pickle.dumps(_Class())),
    "a function": _record(pickle.dumps(print)),
    "os.system": _record(b"\x80\x04cos\nsystem\n(S'true'\ntR."),
    # a tensor reference the table lacks, or not an int
    "reference out of range": _record(b"\x80\x04K\x05Q.", [("float32", (1,), 4)], bytes(4)),
    "reference not an int": _record(b"\x80\x04X\x01\x00\x00\x00aQ."),
    # BUILD on a reference: set_ through Tensor.__setstate__ would read beyond the tensor
    "state on a tensor": _record(b"\x80\x04K\x00Q}b.", [("float32", (1,), 4)], bytes(4)),
    "bytes too few": _record(b"\x80\x04K\x00Q.", [("float32", (4,), 16)], bytes(8)),
    "bytes unaccounted": _record(b"\x80\x04N.", [], bytes(8)),
    "size lies": _record(b"\x80\x04K\x00Q.", [("float32", (4,), 4)], bytes(4)),
    "negative shape": _record(b"\x80\x04K\x00Q.", [("float32", (-1,), 0)]),
    "unknown dtype": _record(b"\x80\x04K\x00Q.", [("object", (1,), 8)], bytes(8)),
    "not this format": pickle.dumps({"status": "ok"}),
    "truncated": wire.dumps({"x": torch.ones(3)})[:-5],
    "a list containing itself": _record(b"\x80\x04]\x94h\x00a."),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_bytes_it_did_not_write_are_refused(name):
    with pytest.raises(wire.WireError):
        wire.loads(HOSTILE[name])


NOT_PLAIN = {"status": "error", "reason": "observations were not plain data", "observations": []}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_cell_record_the_observer_passed_on_unread_earns_nothing_unless_plain(name):
    """The observer passes each child's bytes on as they came; the grader decodes them
    once (``protocol.cell_record``): bytes it did not write become the observer's own "not
    plain data" record, which earns nothing."""
    assert protocol.cell_record(HOSTILE[name]) == NOT_PLAIN


def test_a_cell_record_is_a_dict_the_child_sent_or_the_observer_made():
    assert protocol.cell_record(wire.dumps([1, 2])) == NOT_PLAIN  # plain, but not a record
    made = {"status": "timed out", "observations": []}  # what the observer says of a child
    assert protocol.cell_record(made) is made
    sent = {"status": "ok", "observations": [("k", {"x": torch.ones(2)})]}
    assert _same(protocol.cell_record(wire.dumps(sent)), sent)


def test_a_bool_tensor_holds_only_true_and_false():
    data = _record(b"\x80\x04K\x00Q.", [("bool", (2,), 2)], bytes([0, 7]))
    assert wire.loads(data).tolist() == [False, True]


def test_shared_references_cost_linear_time():
    """A pickle that nests one list 60 times in itself, 2 references each: 2**60 paths."""
    body = b"\x80\x04]\x94" + b"".join(
        b"]\x94(h" + bytes([i]) + b"h" + bytes([i]) + b"e" for i in range(60)
    )
    data = _record(body + b".")
    started = time.monotonic()
    wire.loads(data)
    assert time.monotonic() - started < 5


def test_the_judge_reads_a_large_record_quickly():
    """A test cell's record: thousands of small tensors among 100,000 plain objects."""
    record = [
        {"kind": "tensor", "value": torch.randn(4, 3), "shape": [4, 3], "ptr": i, "x": True}
        for i in range(5000)
    ]
    data = wire.dumps(record)
    started = time.monotonic()
    back = wire.loads(data)
    assert time.monotonic() - started < 2 and torch.equal(back[-1]["value"], record[-1]["value"])
    slow = io.BytesIO()
    torch.save(record, slow)
    assert len(data) < len(slow.getvalue())


def test_a_tensor_of_any_strides_is_written():
    odd = torch.ones(1, 2).as_strided((1,), (2,))  # contiguous by its one size-1 dim
    assert _same(
        [odd, torch.ones(3, 1).expand(3, 4)],
        wire.loads(wire.dumps([odd, torch.ones(3, 1).expand(3, 4)])),
    )
