"""The table in README.md: each receiver's samples (its collapsed stacks) by what the leaf frame
does, and CPU-ms a GB from its CPU ticks over the run (summary.txt) and its GB/s."""
import collections, gzip
RUNS = {'sink': (3886, 16.786), 'cpu': (3622, 10.729), 'cuda': (3588 + 3643, 9.871 + 9.812)}
SECONDS = 6.2  # 1 s warm-up and 5 s measured, both moving data

def bucket(frames):
    leaf, stack = frames[-1], ';'.join(frames)
    if leaf.endswith('recvmsg'): return 'recvmsg (the kernel copying the sockets into gRPC)'
    if leaf.endswith('sendmsg'): return 'sendmsg'
    if 'memmove' in leaf: return 'the copy of the payload out of gRPC'
    if 'kernels::cpu' in stack and 'Float' in stack: return 'the reduction'
    if 'libcuda' in stack: return 'CUDA'
    if any(k in leaf for k in ['cond_signal', 'syscall', 'lll_lock', 'cond_wait', 'epoll',
                               'nptl_death', 'futex']): return 'wake-ups and locks'
    if any(k in leaf for k in ['malloc', 'free', 'morecore', 'realloc']): return 'malloc'
    return 'the rest (gRPC, protobuf, the server)'

for who, (ticks, gbps) in RUNS.items():
    counts, total = collections.Counter(), 0
    for line in gzip.open(f'{who}-collapsed.txt.gz', 'rt'):
        stack, n = line.rsplit(' ', 1)
        counts[bucket(stack.split(';'))] += int(n)
        total += int(n)
    per_gb = ticks / 100 / (gbps * SECONDS) * 1000
    print(f'{who}: {total} samples, {ticks / 100:.1f} CPU-s, {per_gb:.0f} CPU-ms a GB')
    for name, n in counts.most_common():
        print(f'  {name:55s} {100 * n / total:5.1f}% {per_gb * n / total:6.1f}')
