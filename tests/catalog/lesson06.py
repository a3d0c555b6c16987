"""Catalogued answers for lesson 06 (see catalog/__init__.py)."""

from catalog import Right, Wrong

WRONG: dict[str, list[Wrong]] = {
    "ex1_benchmark": [
        Wrong(
            "never synchronizes: times the launches",
            "CS-2",
            """
import statistics

def benchmark(work, synchronize, clock, warmup, repeats):
    for _ in range(warmup):
        work()
    times = []
    for _ in range(repeats):
        start = clock()
        work()
        times.append(clock() - start)
    return statistics.median(times)
""",
        ),
        Wrong(
            "no warm-up: the first calls are timed",
            "CS-4",
            """
import statistics

def benchmark(work, synchronize, clock, warmup, repeats):
    times = []
    for _ in range(repeats):
        synchronize()
        start = clock()
        work()
        synchronize()
        times.append(clock() - start)
    return statistics.median(times)
""",
        ),
        Wrong(
            "synchronizes after reading the clock",
            "CS-1",
            """
import statistics

def benchmark(work, synchronize, clock, warmup, repeats):
    for _ in range(warmup):
        work()
    synchronize()
    times = []
    for _ in range(repeats):
        start = clock()
        work()
        stop = clock()
        synchronize()  # let the device catch up before the next round
        times.append(stop - start)
    return statistics.median(times)
""",
        ),
        Wrong(
            "starts the clock while the warm-up work is still queued",
            "CS-1",
            """
import statistics

def benchmark(work, synchronize, clock, warmup, repeats):
    for _ in range(warmup):
        work()
    times = []
    for _ in range(repeats):
        start = clock()
        work()
        synchronize()
        times.append(clock() - start)
    return statistics.median(times)
""",
        ),
        Wrong(
            "times the warm-up calls too and takes the median of all",
            "CS-4",
            """
import statistics

def benchmark(work, synchronize, clock, warmup, repeats):
    times = []
    for _ in range(warmup + repeats):
        synchronize()
        start = clock()
        work()
        synchronize()
        times.append(clock() - start)
    return statistics.median(times)
""",
        ),
        Wrong(
            "mean instead of median",
            None,
            """
def benchmark(work, synchronize, clock, warmup, repeats):
    for _ in range(warmup):
        work()
    total = 0.0
    for _ in range(repeats):
        synchronize()
        start = clock()
        work()
        synchronize()
        total += clock() - start
    return total / repeats
""",
        ),
        Wrong(
            "returns a tensor from torch.median",
            None,
            """
def benchmark(work, synchronize, clock, warmup, repeats):
    for _ in range(warmup):
        work()
    times = []
    for _ in range(repeats):
        synchronize()
        start = clock()
        work()
        synchronize()
        times.append(clock() - start)
    return torch.tensor(times).median()
""",
        ),
        Wrong(
            "milliseconds instead of seconds",
            None,
            """
import statistics

def benchmark(work, synchronize, clock, warmup, repeats):
    for _ in range(warmup):
        work()
    times = []
    for _ in range(repeats):
        synchronize()
        start = clock()
        work()
        synchronize()
        times.append((clock() - start) * 1000)
    return statistics.median(times)
""",
        ),
        Wrong(
            "synchronizes after the warm-up only when there was one: the caller's work is timed",
            "CS-1",
            """
import statistics

def benchmark(work, synchronize, clock, warmup, repeats):
    if warmup:
        for _ in range(warmup):
            work()
        synchronize()
    times = []
    for _ in range(repeats):
        start = clock()
        work()
        synchronize()
        times.append(clock() - start)
    return statistics.median(times)
""",
        ),
        Wrong(
            "always at least one warm-up call",
            None,
            """
import statistics

def benchmark(work, synchronize, clock, warmup, repeats):
    for _ in range(max(warmup, 1)):
        work()
    times = []
    for _ in range(repeats):
        synchronize()
        start = clock()
        work()
        synchronize()
        times.append(clock() - start)
    return statistics.median(times)
""",
        ),
        Wrong(
            "one interval around all timed calls, divided by repeats",
            None,
            """
def benchmark(work, synchronize, clock, warmup, repeats):
    for _ in range(warmup):
        work()
    synchronize()
    start = clock()
    for _ in range(repeats):
        work()
    synchronize()
    return (clock() - start) / repeats
""",
        ),
        Wrong(
            "time.perf_counter instead of the clock handed over",
            None,
            """
import statistics
import time

def benchmark(work, synchronize, clock, warmup, repeats):
    for _ in range(warmup):
        work()
    times = []
    for _ in range(repeats):
        synchronize()
        start = time.perf_counter()
        work()
        synchronize()
        times.append(time.perf_counter() - start)
    return statistics.median(times)
""",
        ),
        Wrong(
            "a hard-coded warm-up of three calls",
            None,
            """
import statistics

def benchmark(work, synchronize, clock, warmup, repeats):
    for _ in range(3):
        work()
    times = []
    for _ in range(repeats):
        synchronize()
        start = clock()
        work()
        synchronize()
        times.append(clock() - start)
    return statistics.median(times)
""",
        ),
    ],
    "ex2_to_host": [
        Wrong(
            "non_blocking copies, never synchronized",
            "CS-3",
            """
def to_host(tensors, synchronize):
    return [t.to("cpu", non_blocking=True) for t in tensors]
""",
        ),
        Wrong(
            "synchronizes before the copies instead of after",
            "CS-3",
            """
def to_host(tensors, synchronize):
    synchronize()  # make sure the results are ready
    return [t.to("cpu", non_blocking=True) for t in tensors]
""",
        ),
        Wrong(
            "synchronizes before each copy, so the last one is never waited for",
            "CS-3",
            """
def to_host(tensors, synchronize):
    copies = []
    for t in tensors:
        synchronize()
        copies.append(t.to("cpu", non_blocking=True))
    return copies
""",
        ),
        Wrong(
            "names synchronize without calling it",
            "CS-3",
            """
def to_host(tensors, synchronize):
    copies = [t.to("cpu", non_blocking=True) for t in tensors]
    synchronize
    return copies
""",
        ),
        Wrong(
            "blocking copies: not what was asked",
            None,
            """
def to_host(tensors, synchronize):
    return [t.cpu() for t in tensors]
""",
        ),
        Wrong(
            "copies stay on the device",
            None,
            """
def to_host(tensors, synchronize):
    copies = [t.to(t.device, non_blocking=True) for t in tensors]
    synchronize()
    return copies
""",
        ),
        Wrong(
            "calls torch.cuda.synchronize, which fails where there is no GPU",
            None,
            """
def to_host(tensors, synchronize):
    copies = [t.to("cpu", non_blocking=True) for t in tensors]
    torch.cuda.synchronize()
    return copies
""",
            devices=("cpu",),
        ),
        Wrong(
            "clones the host copies before synchronizing",
            "CS-3",
            """
def to_host(tensors, synchronize):
    copies = [t.to("cpu", non_blocking=True).clone() for t in tensors]
    synchronize()
    return copies
""",
        ),
        Wrong(
            "synchronizes only when there are several tensors",
            "CS-3",
            """
def to_host(tensors, synchronize):
    copies = [t.to("cpu", non_blocking=True) for t in tensors]
    if len(copies) > 1:
        synchronize()
    return copies
""",
        ),
        Wrong(
            "puts the copies into the caller's list",
            None,
            """
def to_host(tensors, synchronize):
    for k, t in enumerate(tensors):
        tensors[k] = t.to("cpu", non_blocking=True)
    synchronize()
    return tensors
""",
        ),
        Wrong(
            "a 0-d tensor comes back as a Python number",
            None,
            """
def to_host(tensors, synchronize):
    copies = [t.to("cpu", non_blocking=True) if t.dim() else t.item() for t in tensors]
    synchronize()
    return copies
""",
        ),
        Wrong(
            "copy_ into torch.empty buffers of the default dtype",
            None,
            """
def to_host(tensors, synchronize):
    buffers = [torch.empty(t.shape) for t in tensors]
    for buffer, t in zip(buffers, tensors):
        buffer.copy_(t, non_blocking=True)
    synchronize()
    return buffers
""",
        ),
    ],
    "ex3_pick_device": [
        Wrong(
            "trusts current_accelerator()",
            "CS-5",
            """
def pick_device():
    return torch.accelerator.current_accelerator() or torch.device("cpu")
""",
        ),
        Wrong(
            "asks whether torch was built with CUDA",
            "CS-5",
            """
def pick_device():
    return torch.device("cuda" if torch.backends.cuda.is_built() else "cpu")
""",
        ),
        Wrong(
            "current_accelerator() as is: None on a CPU-only build",
            "CS-5",
            """
def pick_device():
    return torch.accelerator.current_accelerator()
""",
        ),
        Wrong(
            "only knows CUDA",
            None,
            """
def pick_device():
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")
""",
        ),
        Wrong(
            "checks availability but forgets the CPU fallback",
            None,
            """
def pick_device():
    return torch.accelerator.current_accelerator(check_available=True)
""",
        ),
        Wrong(
            "returns a string",
            None,
            """
def pick_device():
    if torch.accelerator.is_available():
        return torch.accelerator.current_accelerator().type
    return "cpu"
""",
        ),
        Wrong(
            "counts CUDA devices only",
            None,
            """
def pick_device():
    if torch.cuda.device_count() > 0:
        return torch.device("cuda")
    return torch.device("cpu")
""",
        ),
        Wrong(
            "allocates a tensor on CUDA to find out",
            None,
            """
def pick_device():
    try:
        torch.zeros(1, device="cuda")
        return torch.device("cuda")
    except RuntimeError:
        return torch.device("cpu")
""",
            # where the allocation succeeds, it names CUDA on a simulated machine with none
            # usable: the symptom of CS-5, and the feedback says so
            named_on=(("cuda", "CS-5"),),
        ),
        Wrong(
            "makes the device torch's default as well",
            None,
            """
def pick_device():
    device = torch.accelerator.current_accelerator(check_available=True)
    device = device if device is not None else torch.device("cpu")
    torch.set_default_device(device)
    return device
""",
        ),
        Wrong(
            "any usable accelerator is taken to be CUDA",
            None,
            """
def pick_device():
    return torch.device("cuda") if torch.accelerator.is_available() else torch.device("cpu")
""",
        ),
        Wrong(
            "asks whether torch was built with MPS",
            "CS-5",
            """
def pick_device():
    if torch.cuda.is_available():
        return torch.device("cuda")
    if torch.backends.mps.is_built():
        return torch.device("mps")
    return torch.device("cpu")
""",
        ),
    ],
    "ex4_load_batch": [
        Wrong(
            "copies remembered per batch (its tensors' ids and shapes, in order): a batch "
            "filled again in place is not copied again",
            None,
            """
_copies = {}


def load_batch(batch, device):
    key = (str(device), tuple((id(t), tuple(t.shape)) for t in batch))
    if key not in _copies:
        _copies[key] = tuple(t.to(device, non_blocking=True) for t in batch)
    return _copies[key]
""",
        ),
        Wrong(
            "pins every batch, then copies non_blocking (the pin is an extra host copy)",
            "CS-6",
            """
def load_batch(batch, device):
    device = torch.device(device)
    if device.type != "cuda":
        return tuple(t.to(device) for t in batch)
    return tuple(t.pin_memory().to(device, non_blocking=True) for t in batch)
""",
        ),
        Wrong(
            "pins what is not pinned yet, then copies non_blocking",
            "CS-6",
            """
def load_batch(batch, device):
    device = torch.device(device)
    if device.type != "cuda":
        return tuple(batch)
    moved = []
    for t in batch:
        if not t.is_pinned():
            t = t.pin_memory()
        moved.append(t.to(device=device, non_blocking=True))
    return tuple(moved)
""",
        ),
        Wrong(
            "pins, but copies the unpinned original",
            "CS-6",
            """
def load_batch(batch, device):
    device = torch.device(device)
    if device.type == "cpu":
        return tuple(batch)
    moved = []
    for t in batch:
        t.pin_memory()
        moved.append(t.to(device, non_blocking=True))
    return tuple(moved)
""",
        ),
        Wrong(
            "pins even for the CPU",
            "CS-6",
            """
def load_batch(batch, device):
    return tuple(t.pin_memory().to(device, non_blocking=True) for t in batch)
""",
        ),
        Wrong(
            # the opposite of CS-6 (neither non_blocking nor pinning used): no ID, the probe
            # of blocking copies of pinned memory says what went wrong and names §7
            "a blocking copy, even of a batch that arrives pinned",
            None,
            """
def load_batch(batch, device):
    return tuple(t.to(device) for t in batch)
""",
        ),
        Wrong(
            "drops the copies and returns the CPU batch",
            None,
            """
def load_batch(batch, device):
    return tuple(batch)
""",
        ),
        Wrong(
            "turns the integer targets into floats",
            None,
            """
def load_batch(batch, device):
    inputs, targets = batch
    return (
        inputs.to(device, non_blocking=True),
        targets.to(device, torch.float32, non_blocking=True),
    )
""",
        ),
        Wrong(
            "ignores the device's index: .cuda() goes to cuda:0",
            None,
            """
def load_batch(batch, device):
    if torch.device(device).type != "cuda":
        return tuple(batch)
    return tuple(t.cuda(non_blocking=True) for t in batch)
""",
        ),
        Wrong(
            "compares the device with torch.device('cuda'), so cuda:1 stays on the CPU",
            None,
            """
def load_batch(batch, device):
    if device == torch.device("cuda"):
        return tuple(t.to(device, non_blocking=True) for t in batch)
    return tuple(batch)
""",
        ),
        Wrong(
            "casts the inputs to float32 on the way",
            None,
            """
def load_batch(batch, device):
    inputs, targets = batch
    inputs = inputs.to(device, torch.float32, non_blocking=True)
    return inputs, targets.to(device, non_blocking=True)
""",
        ),
        Wrong(
            "reuses the caller's list for the copies: a DataLoader batch is changed",
            None,
            """
def load_batch(batch, device):
    moved = [t.to(device, non_blocking=True) for t in batch]
    try:
        batch[:] = moved
    except TypeError:  # a tuple cannot be reused
        pass
    return tuple(moved)
""",
        ),
    ],
    "ex5_epoch_mean_loss": [
        Wrong(
            "the same step and batches again: the first mean returned, no step run",
            None,
            """
_done = []


def epoch_mean_loss(step, batches):
    for seen_step, seen_batches, mean in _done:
        if seen_step is step and seen_batches is batches:
            return mean
    total = torch.zeros(())
    for batch in batches:
        total = total + step(batch)
    mean = (total / len(batches)).item()
    _done.append((step, batches, mean))
    return mean
""",
        ),
        Wrong(
            ".item() at every step",
            "CS-1",
            """
def epoch_mean_loss(step, batches):
    total = 0.0
    for batch in batches:
        total += step(batch).item()
    return total / len(batches)
""",
        ),
        Wrong(
            "prints every loss",
            "CS-1",
            """
def epoch_mean_loss(step, batches):
    losses = []
    for k, batch in enumerate(batches):
        loss = step(batch)
        print(f"step {k}: loss {loss:.4f}")
        losses.append(loss)
    return torch.stack(losses).mean().item()
""",
        ),
        Wrong(
            "float() at every step",
            "CS-1",
            """
def epoch_mean_loss(step, batches):
    losses = [float(step(batch)) for batch in batches]
    return sum(losses) / len(losses)
""",
        ),
        Wrong(
            "returns a tensor",
            None,
            """
def epoch_mean_loss(step, batches):
    return torch.stack([step(batch) for batch in batches]).mean()
""",
        ),
        Wrong(
            "divides by a hard-coded number of batches",
            None,
            """
def epoch_mean_loss(step, batches):
    total = sum(step(batch) for batch in batches)
    return (total / 5).item()
""",
        ),
        Wrong(
            "calls step twice per batch",
            None,
            """
def epoch_mean_loss(step, batches):
    total = torch.zeros(())
    for batch in batches:
        step(batch)  # train
        total = total + step(batch)
    return (total / len(batches)).item()
""",
        ),
        Wrong(
            "torch.tensor(list of losses) reads every loss to the host",
            "CS-1",
            """
def epoch_mean_loss(step, batches):
    losses = [step(batch) for batch in batches]
    return torch.tensor(losses).mean().item()
""",
        ),
        Wrong(
            "statistics.mean of float(loss)",
            "CS-1",
            """
import statistics

def epoch_mean_loss(step, batches):
    return statistics.mean(float(step(batch)) for batch in batches)
""",
        ),
        Wrong(
            "empties the caller's list with pop(0)",
            None,
            """
def epoch_mean_loss(step, batches):
    n, total = len(batches), 0
    while batches:
        total = total + step(batches.pop(0))
    return (total / n).item()
""",
        ),
        Wrong(
            "steps through the batches in reverse order",
            None,
            """
def epoch_mean_loss(step, batches):
    losses = [step(batch) for batch in reversed(batches)]
    return torch.stack(losses).mean().item()
""",
        ),
        Wrong(
            "fills a host tensor one loss at a time (each assignment copies to the host)",
            "CS-1",
            """
def epoch_mean_loss(step, batches):
    losses = torch.empty(len(batches))
    for k, batch in enumerate(batches):
        losses[k] = step(batch)
    return losses.mean().item()
""",
        ),
    ],
    "ex6_overlap_copy": [
        Wrong(
            "the copy on the current stream: it waits for the computation",
            "CS-7",
            """
def overlap_copy(compute, batch, side, cuda, device):
    moved = batch.to(device, non_blocking=True)
    return compute(), moved
""",
        ),
        Wrong(
            "the computation inside the side stream's block too",
            "CS-7",
            """
def overlap_copy(compute, batch, side, cuda, device):
    with cuda.stream(side):
        moved = batch.to(device, non_blocking=True)
        result = compute()
    cuda.current_stream().wait_stream(side)
    moved.record_stream(cuda.current_stream())
    return result, moved
""",
        ),
        Wrong(
            "the side stream made to wait for the computation first",
            "CS-7",
            """
def overlap_copy(compute, batch, side, cuda, device):
    main = cuda.current_stream()
    result = compute()
    side.wait_stream(main)
    with cuda.stream(side):
        moved = batch.to(device, non_blocking=True)
    main.wait_stream(side)
    moved.record_stream(main)
    return result, moved
""",
        ),
        Wrong(
            "a blocking copy on the side stream: the host waits, the computation starts late",
            None,
            """
def overlap_copy(compute, batch, side, cuda, device):
    with cuda.stream(side):
        moved = batch.to(device)
    result = compute()
    cuda.current_stream().wait_stream(side)
    moved.record_stream(cuda.current_stream())
    return result, moved
""",
        ),
        Wrong(
            "no wait: the current stream may read the batch before the copy ends",
            "CS-3",
            """
def overlap_copy(compute, batch, side, cuda, device):
    with cuda.stream(side):
        moved = batch.to(device, non_blocking=True)
    result = compute()
    moved.record_stream(cuda.current_stream())
    return result, moved
""",
        ),
        Wrong(
            "wait_stream the wrong way round",
            "CS-3",
            """
def overlap_copy(compute, batch, side, cuda, device):
    main = cuda.current_stream()
    with cuda.stream(side):
        moved = batch.to(device, non_blocking=True)
    result = compute()
    side.wait_stream(main)
    moved.record_stream(main)
    return result, moved
""",
        ),
        Wrong(
            "the event waited for on the side stream, not on the current one",
            "CS-3",
            """
def overlap_copy(compute, batch, side, cuda, device):
    done = cuda.Event()
    with cuda.stream(side):
        moved = batch.to(device, non_blocking=True)
        done.record()
    result = compute()
    side.wait_event(done)
    moved.record_stream(cuda.current_stream())
    return result, moved
""",
        ),
        Wrong(
            "no record_stream: the batch's memory may be reused while the current stream reads it",
            None,
            """
def overlap_copy(compute, batch, side, cuda, device):
    with cuda.stream(side):
        moved = batch.to(device, non_blocking=True)
    result = compute()
    cuda.current_stream().wait_stream(side)
    return result, moved
""",
        ),
        Wrong(
            "the host waits for the side stream instead of ordering the streams",
            None,
            """
def overlap_copy(compute, batch, side, cuda, device):
    with cuda.stream(side):
        moved = batch.to(device, non_blocking=True)
    result = compute()
    side.synchronize()
    return result, moved
""",
        ),
        Wrong(
            "returns the batch still on the CPU",
            None,
            """
def overlap_copy(compute, batch, side, cuda, device):
    return compute(), batch
""",
        ),
    ],
}

RIGHT: dict[str, list[Right]] = {
    "ex1_benchmark": [
        Right(
            "one synchronize after the warm-up, one per timed call; statistics.median",
            """
import statistics

def benchmark(work, synchronize, clock, warmup, repeats):
    for _ in range(warmup):
        work()
    synchronize()
    times = []
    for _ in range(repeats):
        start = clock()
        work()
        synchronize()
        times.append(clock() - start)
    return statistics.median(times)
""",
        ),
        Right(
            "torch.median, turned into a float",
            """
def benchmark(work, synchronize, clock, warmup, repeats):
    [work() for _ in range(warmup)]
    synchronize()
    durations = torch.zeros(repeats, dtype=torch.float64)
    for k in range(repeats):
        synchronize()
        t0 = clock()
        work()
        synchronize()
        durations[k] = clock() - t0
    return float(durations.median())
""",
        ),
        Right(
            "time stamps first, differences after",
            """
import statistics

def benchmark(work, synchronize, clock, warmup, repeats):
    for _ in range(warmup):
        work()
    synchronize()
    stamps = [clock()]
    for _ in range(repeats):
        work()
        synchronize()
        stamps.append(clock())
    return statistics.median(b - a for a, b in zip(stamps, stamps[1:]))
""",
        ),
        Right(
            "also reads the clock before the warm-up, for the total time",
            """
def benchmark(work, synchronize, clock, warmup, repeats):
    began = clock()
    for _ in range(warmup):
        work()
    synchronize()
    times = []
    for _ in range(repeats):
        t0 = clock()
        work()
        synchronize()
        times.append(clock() - t0)
    print(f"benchmark: {clock() - began:.3f} s in all")
    return sorted(times)[repeats // 2]
""",
        ),
        Right(
            "a class with __call__, bound to the exercise's name",
            """
from statistics import median


class Timer:
    def __call__(self, work, synchronize, clock, warmup, repeats):
        for _ in range(warmup):
            work()
        synchronize()
        durations = []
        while len(durations) < repeats:
            started = clock()
            work()
            synchronize()
            durations.append(clock() - started)
        return median(durations)


benchmark = Timer()
""",
        ),
        Right(
            "a helper that times one call, statistics imported under another name",
            """
import statistics as st


def timed_once(work, synchronize, clock):
    synchronize()
    start = clock()
    work()
    synchronize()
    return clock() - start


def benchmark(work, synchronize, clock, warmup, repeats):
    for _ in range(warmup):
        work()
    return st.median([timed_once(work, synchronize, clock) for _ in range(repeats)])
""",
        ),
    ],
    "ex2_to_host": [
        Right(
            "copy_ into CPU buffers",
            """
def to_host(tensors, synchronize):
    buffers = [torch.empty_like(t, device="cpu") for t in tensors]
    for buffer, t in zip(buffers, tensors):
        buffer.copy_(t, non_blocking=True)
    synchronize()
    return buffers
""",
        ),
        Right(
            "keyword arguments, a loop",
            """
def to_host(tensors, synchronize):
    host = []
    for t in tensors:
        host.append(t.to(device="cpu", non_blocking=True))
    synchronize()
    return host
""",
        ),
        Right(
            "waits after every copy (safe, only slower)",
            """
def to_host(tensors, synchronize):
    out = []
    for t in tensors:
        out.append(t.to(torch.device("cpu"), non_blocking=True))
        synchronize()
    return out
""",
        ),
        Right(
            "a module-level CPU device; only tensors off the CPU are copied",
            """
HOST = torch.device("cpu")


def to_host(tensors, synchronize):
    copies = [t if t.device == HOST else t.to(HOST, non_blocking=True) for t in tensors]
    synchronize()
    return copies
""",
        ),
        Right(
            "a class with __call__, list(map(...))",
            """
class Fetch:
    def __call__(self, tensors, synchronize):
        copies = list(map(lambda t: t.to("cpu", non_blocking=True), tensors))
        synchronize()
        return copies


to_host = Fetch()
""",
        ),
        Right(
            "pinned host buffers, copy_ with non_blocking",
            """
def to_host(tensors, synchronize):
    buffers = []
    for t in tensors:
        buffer = torch.empty(t.shape, dtype=t.dtype, pin_memory=True)
        buffer.copy_(t, non_blocking=True)
        buffers.append(buffer)
    synchronize()
    return buffers
""",
        ),
    ],
    "ex3_pick_device": [
        Right(
            "check_available=True with a fallback",
            """
def pick_device():
    found = torch.accelerator.current_accelerator(check_available=True)
    return found if found is not None else torch.device("cpu")
""",
        ),
        Right(
            "counts the usable devices",
            """
def pick_device():
    if torch.accelerator.device_count() > 0:
        return torch.device(torch.accelerator.current_accelerator().type)
    return torch.device("cpu")
""",
        ),
        Right(
            "asks each backend",
            """
def pick_device():
    if torch.cuda.is_available():
        return torch.device("cuda")
    if torch.backends.mps.is_available():
        return torch.device("mps")
    if torch.xpu.is_available():
        return torch.device("xpu")
    return torch.device("cpu")
""",
        ),
        Right(
            "the pattern of the PyTorch docs: current_accelerator(check_available=True), walrus",
            """
def pick_device():
    if (device := torch.accelerator.current_accelerator(check_available=True)) is not None:
        return device
    return torch.device("cpu")
""",
        ),
        Right(
            "probing functions imported by name",
            """
from torch.accelerator import current_accelerator, is_available


def pick_device():
    if is_available():
        return torch.device(current_accelerator().type)
    return torch.device("cpu")
""",
        ),
        Right(
            "torch.device(... or 'cpu')",
            """
def pick_device():
    return torch.device(torch.accelerator.current_accelerator(check_available=True) or "cpu")
""",
        ),
    ],
    "ex4_load_batch": [
        Right(
            "a loop, .to with keywords",
            """
def load_batch(batch, device):
    moved = []
    for t in batch:
        moved.append(t.to(device=device, non_blocking=True))
    return tuple(moved)
""",
        ),
        Right(
            "non_blocking only where the batch is pinned (a pageable copy waits either way)",
            """
def load_batch(batch, device):
    return tuple(t.to(device, non_blocking=t.is_pinned()) for t in batch)
""",
        ),
        Right(
            ".cuda(device, non_blocking=True) for CUDA, .to for another accelerator, the batch "
            "as it is for the CPU",
            """
def load_batch(batch, device):
    inputs, targets = batch
    if str(device).startswith("cuda"):
        inputs = inputs.cuda(device, non_blocking=True)
        targets = targets.cuda(device, non_blocking=True)
    elif device.type != "cpu":  # MPS, XPU, ...
        inputs = inputs.to(device, non_blocking=True)
        targets = targets.to(device, non_blocking=True)
    return inputs, targets
""",
        ),
        Right(
            "a class with __call__ and a helper for one tensor",
            """
def moved(t, device):
    return t.to(device, non_blocking=True)


class Loader:
    def __call__(self, batch, device):
        return tuple(moved(t, device) for t in batch)


load_batch = Loader()
""",
        ),
        Right(
            "copy_ into a buffer made on the device",
            """
def load_batch(batch, device):
    out = []
    for t in batch:
        buffer = torch.empty(t.shape, dtype=t.dtype, device=device)
        buffer.copy_(t, non_blocking=True)
        out.append(buffer)
    return tuple(out)
""",
        ),
        Right(
            "pin_memory() only on what is pinned already (it returns the same tensor)",
            """
def load_batch(batch, device):
    return tuple(
        (t.pin_memory() if t.is_pinned() else t).to(device, non_blocking=True) for t in batch
    )
""",
        ),
        Right(
            "the batch's own sequence type: a DataLoader list comes back a list",
            """
def load_batch(batch, device):
    moved = [t.to(device, non_blocking=True) for t in batch]
    return moved if isinstance(batch, list) else tuple(moved)
""",
        ),
        Right(
            "unpacked into two names, a tuple built with a trailing comma",
            """
def load_batch(batch, device):
    inputs, targets = batch
    moved = inputs.to(device, non_blocking=True), targets.to(device, non_blocking=True)
    return moved
""",
        ),
    ],
    "ex5_epoch_mean_loss": [
        Right(
            "torch.stack, one .item()",
            """
def epoch_mean_loss(step, batches):
    return torch.stack([step(batch) for batch in batches]).mean().item()
""",
        ),
        Right(
            "Python sum of tensors, one float()",
            """
def epoch_mean_loss(step, batches):
    total = sum(step(batch) for batch in batches)
    return float(total / len(batches))
""",
        ),
        Right(
            "running sum on the device, detached, .tolist() at the end",
            """
def epoch_mean_loss(step, batches):
    total, count = None, 0
    for batch in batches:
        loss = step(batch).detach()
        total = loss if total is None else total + loss
        count += 1
    return (total / count).tolist()
""",
        ),
        Right(
            "Python float start, +=, one .item()",
            """
def epoch_mean_loss(step, batches):
    total = 0.0
    for batch in batches:
        total += step(batch)
    return (total / len(batches)).item()
""",
        ),
        Right(
            "map over the batches, torch.mean, a class with __call__",
            """
class EpochMean:
    def __call__(self, step, batches):
        return torch.mean(torch.stack(list(map(step, batches)))).item()


epoch_mean_loss = EpochMean()
""",
        ),
    ],
    "ex6_overlap_copy": [
        Right(
            "an event recorded after the copy, waited for on the current stream",
            """
def overlap_copy(compute, batch, side, cuda, device):
    main = cuda.current_stream()
    done = cuda.Event()
    with cuda.stream(side):
        moved = batch.to(device, non_blocking=True)
        done.record()
    result = compute()
    main.wait_event(done)
    moved.record_stream(main)
    return result, moved
""",
        ),
        Right(
            "the computation first, then the copy on the side stream",
            """
def overlap_copy(compute, batch, side, cuda, device):
    result = compute()
    with cuda.stream(side):
        moved = batch.to(device, non_blocking=True)
    main = cuda.current_stream()
    main.wait_stream(side)
    moved.record_stream(main)
    return result, moved
""",
        ),
        Right(
            "copy_ into a buffer made on the side stream",
            """
def overlap_copy(compute, batch, side, cuda, device):
    with cuda.stream(side):
        moved = torch.empty(batch.shape, dtype=batch.dtype, device=device)
        moved.copy_(batch, non_blocking=True)
    result = compute()
    cuda.current_stream().wait_stream(side)
    moved.record_stream(cuda.current_stream())
    return result, moved
""",
        ),
        Right(
            "event.wait(stream) and side.record_event()",
            """
def overlap_copy(compute, batch, side, cuda, device):
    with cuda.stream(side):
        moved = batch.to(device=device, non_blocking=True)
    done = side.record_event()
    result = compute()
    done.wait(cuda.current_stream())
    moved.record_stream(cuda.current_stream())
    return (result, moved)
""",
        ),
        Right(
            "a class with __call__ and a helper",
            """
def copy_on(stream, batch, device, cuda):
    with cuda.stream(stream):
        return batch.to(device, non_blocking=True)


class Overlap:
    def __call__(self, compute, batch, side, cuda, device):
        moved = copy_on(side, batch, device, cuda)
        result = compute()
        main = cuda.current_stream()
        main.wait_stream(side)
        moved.record_stream(main)
        return result, moved


overlap_copy = Overlap()
""",
        ),
        Right(
            "a list turned into a tuple, .cuda(device, non_blocking=True)",
            """
def overlap_copy(compute, batch, side, cuda, device):
    with cuda.stream(side):
        moved = batch.cuda(device, non_blocking=True)
    out = [compute(), moved]
    cuda.current_stream().wait_stream(side)
    moved.record_stream(cuda.current_stream())
    return tuple(out)
""",
        ),
    ],
}
