#!/usr/bin/env python3
"""Check a Parley dataset (parley export --format jsonl) and reproduce its tables.

Python's standard library only. Usage:

    python3 docs/examples/dataset.py parley.jsonl

It checks what the last line says of the lines before it: the SHA-256 of their bytes, how
many lines of each type there are, and that they come in the dataset's order. (The realm
key's proof over the last line is Ed25519, which the standard library lacks: check it with
`parley verify-export`, or any eddsa-jcs-2022 verifier.) Then it prints, from the lines
alone, the claims by state, the claims by certainty, the stances by kind and the messages
by kind, each row "name<TAB>count", sorted by name. Exit 0 when the checks hold, 1 otherwise.
"""

import collections
import hashlib
import json
import sys

ORDER = ["room", "thread", "message", "event", "claim", "stance", "key"]


def read(path):
    """Read the dataset: the lines before the export line, hashed as they are, and that line."""
    digest = hashlib.sha256()
    lines, export = [], None
    with open(path, "rb") as f:
        for raw in f:
            line = json.loads(raw)
            if line["type"] == "export":
                export = line
                break
            digest.update(raw)
            lines.append(line)
    return lines, export, digest.hexdigest()


def check(lines, export, sha256):
    """The problems found, one sentence each; none when the dataset is whole."""
    if export is None:
        return ["there is no export line: the dataset is incomplete"]
    problems = []
    if sha256 != export["sha256"]:
        problems.append("the lines hash to %s, the export line says %s: they were changed" % (sha256, export["sha256"]))
    counts = collections.Counter(line["type"] for line in lines)
    for typ in ORDER:
        if counts[typ] != export["counts"].get(typ):
            problems.append("%d %s lines, the export line says %s" % (counts[typ], typ, export["counts"].get(typ)))
    ranks = [ORDER.index(line["type"]) for line in lines]
    if ranks != sorted(ranks):
        problems.append("the lines are not in the order " + ", ".join(ORDER))
    return problems


def table(title, counter):
    print(title)
    for name in sorted(counter):
        print("  %s\t%d" % (name, counter[name]))


def main(argv):
    if len(argv) != 2:
        print("usage: dataset.py FILE", file=sys.stderr)
        return 2
    lines, export, sha256 = read(argv[1])
    problems = check(lines, export, sha256)
    for p in problems:
        print("FAIL " + p)
    if problems:
        return 1
    print("ok   %d lines of realm %s, sha256 %s" % (len(lines), export["realm"], sha256))
    claims = [line for line in lines if line["type"] == "claim"]
    table("claims by state", collections.Counter(c["state"] for c in claims))
    table("claims by certainty", collections.Counter(c["certainty"] for c in claims))
    table("stances by kind", collections.Counter(s["stance"] for s in lines if s["type"] == "stance"))
    table("messages by kind", collections.Counter(m["kind"] for m in lines if m["type"] == "message"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
