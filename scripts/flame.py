#!/usr/bin/env python3
"""A gperftools CPU profile (CPUPROFILE=...) as a flame graph (SVG) and collapsed stacks.

Profiles taken on the GPU host (LD_PRELOAD of Debian's libprofiler, carried with the package)
are read here: each frame's object is looked up at its path in the profile's own memory map, or
where --lib maps that path (the host's libc, brought back beside the profile). Objects with a
symbol table (the package's binaries) are named by addr2line; a stripped one (Ubuntu's libc) by
its nearest exported symbol, so glibc's internal functions appear under an exported neighbour's
name: --rename gives them theirs once checked (objdump of the host's libc).

    scripts/flame.py PROFILE --svg OUT.svg [--collapsed OUT.txt] [--title TEXT]
        [--lib HOSTPATH=LOCALPATH ...] [--rename OLD=NEW ...]
"""

import argparse
import bisect
import collections
import html
import os
import struct
import subprocess
import zlib


def read_profile(path):
    """The samples (count, [pc leaf first]) and the memory map (lo, hi, offset, path)."""
    data = open(path, 'rb').read()
    word = lambda i: struct.unpack_from('<Q', data, 8 * i)[0]
    if word(0) != 0 or word(1) != 3:
        raise SystemExit(f'{path}: not a 64-bit gperftools CPU profile')
    i, samples = 2 + word(1), []
    while True:
        count, depth = word(i), word(i + 1)
        if count == 0 and depth == 1 and word(i + 2) == 0:
            i += 3
            break
        samples.append((count, [word(i + 2 + k) for k in range(depth)]))
        i += 2 + depth
    maps = []
    for line in data[8 * i:].decode(errors='replace').splitlines():
        parts = line.split()
        if len(parts) >= 6 and 'x' in parts[1]:
            lo, hi = (int(x, 16) for x in parts[0].split('-'))
            maps.append((lo, hi, int(parts[2], 16), parts[5]))
    return samples, sorted(maps)


class Objects:
    """Names for (object path, file offset) pairs, each object's looked up in one batch."""

    def __init__(self, libs):
        self.libs = libs
        self.wanted = collections.defaultdict(set)
        self.names = {}

    def local(self, path):
        return self.libs.get(path, path)

    def want(self, path, offset):
        self.wanted[path].add(offset)

    def resolve(self):
        for path, offsets in self.wanted.items():
            local = self.local(path)
            base = os.path.basename(path)
            if not os.path.exists(local):
                for off in offsets:
                    self.names[(path, off)] = f'{base}+{off:#x}'
                continue
            segments = []
            for line in subprocess.run(['readelf', '-lW', local], capture_output=True,
                                       text=True).stdout.splitlines():
                p = line.split()
                if p and p[0] == 'LOAD':
                    segments.append((int(p[1], 16), int(p[2], 16), int(p[4], 16)))
            vaddr = {}
            for off in offsets:
                for seg_off, seg_vaddr, size in segments:
                    if seg_off <= off < seg_off + size:
                        vaddr[off] = off - seg_off + seg_vaddr
            symtab = subprocess.run(['nm', '--defined-only', local], capture_output=True,
                                    text=True).stdout.strip() != ''
            if symtab:
                addrs = sorted(set(vaddr.values()))
                out = subprocess.run(['addr2line', '-f', '-C', '-e', local] +
                                     [hex(a) for a in addrs], capture_output=True,
                                     text=True).stdout.splitlines()
                by_addr = {a: out[2 * k] for k, a in enumerate(addrs)}
                for off in offsets:
                    name = by_addr.get(vaddr.get(off), '??')
                    self.names[(path, off)] = name if name != '??' else f'{base}+{off:#x}'
                continue
            exports = []
            for line in subprocess.run(['nm', '-D', '-C', '--defined-only', local],
                                       capture_output=True, text=True).stdout.splitlines():
                p = line.split(maxsplit=2)
                if len(p) == 3 and p[1] in 'TtWi':
                    exports.append((int(p[0], 16), p[2].split('@')[0]))
            exports.sort()
            for off in offsets:
                k = bisect.bisect_right(exports, (vaddr.get(off, off), '~')) - 1
                near = exports[k][1] if k >= 0 else f'{off:#x}'
                self.names[(path, off)] = f'{base}:{near}'


def collapse(samples, maps, objects, renames):
    def where(pc):
        k = bisect.bisect_right(maps, (pc, float('inf'))) - 1
        if k >= 0 and maps[k][0] <= pc < maps[k][1]:
            lo, _, offset, path = maps[k]
            return path, pc - lo + offset
        return '?', pc

    # Callers' pcs are return addresses: one byte back lies in the call.
    frames = [[where(pc - (0 if d == 0 else 1)) for d, pc in enumerate(stack)]
              for _, stack in samples]
    for stack in frames:
        for path, off in stack:
            objects.want(path, off)
    objects.resolve()
    stacks = collections.Counter()
    for (count, _), stack in zip(samples, frames):
        names = [renames.get(objects.names[f], objects.names[f]) for f in reversed(stack)]
        stacks[';'.join(n.replace(';', ',') for n in names)] += count
    return stacks


def render_svg(stacks, title, width=1200, row=16):
    root = {'n': 0, 'kids': {}}
    for stack, count in stacks.items():
        node = root
        node['n'] += count
        for name in stack.split(';'):
            node = node['kids'].setdefault(name, {'n': 0, 'kids': {}})
            node['n'] += count
    total = max(root['n'], 1)
    boxes, depth_max = [], 0

    def place(node, name, x, depth):
        nonlocal depth_max
        depth_max = max(depth_max, depth)
        boxes.append((name, x, depth, node['n']))
        for kid_name, kid in sorted(node['kids'].items()):
            place(kid, kid_name, x, depth + 1)
            x += kid['n']

    place(root, 'all', 0, 0)
    height = (depth_max + 3) * row
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="monospace" font-size="11">',
           f'<rect width="100%" height="100%" fill="#fdfdf8"/>',
           f'<text x="{width / 2}" y="14" text-anchor="middle" font-size="13">'
           f'{html.escape(title)}</text>']
    scale = (width - 20) / total
    for name, x, depth, n in boxes:
        w = n * scale
        if w < 0.3:
            continue
        y = height - (depth + 1) * row
        hue = zlib.crc32(name.encode()) % 60
        label = f'{name} ({n} samples, {100 * n / total:.1f}%)'
        out.append(f'<g><title>{html.escape(label)}</title>'
                   f'<rect x="{10 + x * scale:.1f}" y="{y}" width="{w:.1f}" height="{row - 1}" '
                   f'fill="hsl({hue},80%,{60 + hue % 15}%)" rx="1"/>')
        chars = int(w / 6.6)
        if chars >= 3:
            text = name if len(name) <= chars else name[:chars - 2] + '..'
            out.append(f'<text x="{12 + x * scale:.1f}" y="{y + row - 4}">'
                       f'{html.escape(text)}</text>')
        out.append('</g>')
    out.append('</svg>')
    return '\n'.join(out) + '\n'


def pairs(items):
    return dict(item.split('=', 1) for item in items or [])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('profile')
    parser.add_argument('--svg', required=True)
    parser.add_argument('--collapsed')
    parser.add_argument('--title', default='')
    parser.add_argument('--lib', action='append', help='HOSTPATH=LOCALPATH')
    parser.add_argument('--rename', action='append', help='OLD=NEW')
    args = parser.parse_args()
    samples, maps = read_profile(args.profile)
    stacks = collapse(samples, maps, Objects(pairs(args.lib)), pairs(args.rename))
    if args.collapsed:
        with open(args.collapsed, 'w') as f:
            for stack, count in stacks.most_common():
                f.write(f'{stack} {count}\n')
    with open(args.svg, 'w') as f:
        f.write(render_svg(stacks, args.title or os.path.basename(args.profile)))


if __name__ == '__main__':
    main()
