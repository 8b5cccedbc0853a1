"""Random regular-expression cases for Scripts/compat/rules-emulator-diff: patterns over a small
alphabet (alternatives, classes, greedy and lazy quantifiers, groups, (?i)), each used by
matches(), replace() with $0 or split() on a random string, written as a rules expression whose
expected answer comes from Python's `re` (leftmost-first, as RE2). Both servers may disagree with
Python; what the diff compares is Hearth's answer with the emulator's.
Usage: python3 Scripts/compat/lib/regex_cases.py SEED COUNT > cases.txt
       Scripts/compat/rules-emulator-diff cases.txt 1 1
"""
import random, re, sys
R = random.Random(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
atoms = ["a", "b", "A", ".", "[ab]", "[^a]", "\\\\d", "x", "(a|b)", "(ab|a)", "(?:a|ab)", "(?i:a)", "(b)"]
quants = ["", "", "*", "+", "?", "*?", "+?", "??", "{1,2}", "{2}"]
def pattern(depth=0):
    n = R.randint(1, 4)
    parts = []
    for _ in range(n):
        a = R.choice(atoms)
        if depth < 1 and R.random() < 0.15: a = "(" + pattern(depth + 1) + ")"
        parts.append(a + R.choice(quants))
    p = "".join(parts)
    if R.random() < 0.2: p = p + "|" + pattern(depth + 1) if depth < 1 else p
    if R.random() < 0.15: p = "(?i)" + p
    return p
out = []
for _ in range(int(sys.argv[2]) if len(sys.argv) > 2 else 200):
    p = pattern()
    s = "".join(R.choice("abAx1") for _ in range(R.randint(0, 7)))
    py = p.replace("\\\\d", "\\d")
    try:
        cre = re.compile(py)
    except re.error:
        continue
    kind = R.random()
    rp = p.replace("'", "\\'")
    if kind < 0.3:
        exp = "true" if cre.fullmatch(s) else "false"
        out.append(f"'{s}'.matches('{rp}') == {exp}")
    elif kind < 0.7:
        res = cre.sub(lambda m: "<" + m.group(0) + ">", s)
        out.append(f"'{s}'.replace('{rp}', '<$0>') == '{res}'")
    else:
        parts = cre.split(s) if cre.groups == 0 else None
        if parts is None: continue
        while len(parts) > 1 and parts[-1] == "": parts.pop()
        out.append(f"'{s}'.split('{rp}') == [" + ", ".join("'" + x + "'" for x in parts) + "]")
print("\n".join(out))
