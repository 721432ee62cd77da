#!/usr/bin/env python3
"""Changes the files of a dump tree while npgx reads it (tests/it/truncation.rs): the separate
process of the truncation test.

After a random delay, until it is killed or --max actions are done, it picks a file at random
and, at random intervals, either
  - truncates it to a random shorter length (often inside its tensor data, sometimes to 0),
  - deletes it, or
  - replaces it by renaming a copy of its own bytes over it (same content, new inode).
Every action is printed to stdout as `<action> <path> <length>` (flushed), so the test can tell
which files changed. The seed makes a run's choices repeatable; its timing against npgx is not.

The copy for a replacement is written under --staging (outside the tree, on the same file
system), so npgx never sees a half-written file.

Usage: mutate_tree.py ROOT --staging DIR --seed N [--delay-ms MAX] [--gap-ms MAX] [--max N]
"""

import argparse
import os
import random
import sys
import time


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root")
    ap.add_argument("--staging", required=True, help="directory for replacement copies (same file system)")
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--delay-ms", type=float, default=300.0, help="longest delay before the first action")
    ap.add_argument("--gap-ms", type=float, default=20.0, help="longest gap between two actions")
    ap.add_argument("--max", type=int, default=1000, help="actions at most")
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    files = sorted(
        os.path.join(d, n) for d, _, names in os.walk(args.root) for n in names
    )
    time.sleep(rng.uniform(0, args.delay_ms) / 1000)
    for _ in range(args.max):
        if not files:
            break
        path = files.pop(rng.randrange(len(files)))
        try:
            size = os.stat(path).st_size
            action = rng.choices(["truncate", "delete", "rename"], weights=[6, 2, 2])[0]
            if action == "truncate":
                new = 0 if rng.random() < 0.1 else rng.randrange(max(size, 1))
                os.truncate(path, new)
            elif action == "delete":
                new = 0
                os.unlink(path)
            else:
                with open(path, "rb") as f:
                    data = f.read()
                tmp = os.path.join(args.staging, "replacing")
                with open(tmp, "wb") as f:
                    f.write(data)
                os.replace(tmp, path)
                new = len(data)
            print(f"{action} {path} {new}", flush=True)
        except OSError as e:
            print(f"failed {path} {e}", file=sys.stderr, flush=True)
        time.sleep(rng.uniform(0, args.gap_ms) / 1000)
    return 0


if __name__ == "__main__":
    sys.exit(main())
