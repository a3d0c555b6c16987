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
            devices=("cuda",),
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
    ],
    "ex4_load_batch": [
        Wrong(
            "non_blocking from pageable memory",
            "CS-6",
            """
def load_batch(batch, device):
    return tuple(t.to(device, non_blocking=True) for t in batch)
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
            None,
            """
def load_batch(batch, device):
    return tuple(t.pin_memory().to(device, non_blocking=True) for t in batch)
""",
        ),
        Wrong(
            "pins but copies blocking",
            None,
            """
def load_batch(batch, device):
    device = torch.device(device)
    if device.type != "cuda":
        return tuple(batch)
    return tuple(t.pin_memory().to(device) for t in batch)
""",
        ),
        Wrong(
            "drops the copies and returns the CPU batch",
            None,
            """
def load_batch(batch, device):
    if torch.device(device).type == "cuda":
        for t in batch:
            t.pin_memory().to(device, non_blocking=True)
    return tuple(batch)
""",
        ),
        Wrong(
            "turns the integer targets into floats",
            None,
            """
def load_batch(batch, device):
    device = torch.device(device)
    inputs, targets = batch
    if device.type == "cuda":
        inputs, targets = inputs.pin_memory(), targets.pin_memory()
    return (
        inputs.to(device, torch.float32, non_blocking=True),
        targets.to(device, torch.float32, non_blocking=True),
    )
""",
        ),
        Wrong(
            "always .cuda(), whatever the device",
            "CS-6",
            """
def load_batch(batch, device):
    return tuple(t.cuda(non_blocking=True) for t in batch)
""",
        ),
    ],
    "ex5_epoch_mean_loss": [
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
    return torch.device("cpu")
""",
        ),
    ],
    "ex4_load_batch": [
        Right(
            "checks is_pinned first, .to with keywords",
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
        Right(
            ".cuda(device, non_blocking=True) on pinned tensors",
            """
def load_batch(batch, device):
    inputs, targets = batch
    if str(device).startswith("cuda"):
        inputs = inputs.pin_memory().cuda(device, non_blocking=True)
        targets = targets.pin_memory().cuda(device, non_blocking=True)
    return inputs, targets
""",
        ),
        Right(
            "non_blocking only when pinned; a plain .to for the CPU",
            """
def load_batch(batch, device):
    on_gpu = torch.device(device).type == "cuda"
    if on_gpu:
        batch = [t.pin_memory() for t in batch]
    return tuple(t.to(device, non_blocking=on_gpu) for t in batch)
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
    ],
}
