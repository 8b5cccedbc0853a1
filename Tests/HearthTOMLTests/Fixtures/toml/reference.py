#!/usr/bin/env python3
"""The reference side of TOMLTests: what Python's tomllib makes of every *.toml in a directory.

Usage: python3 reference.py DIRECTORY

Prints one JSON object, {"<file name>": {"ok": <value>} | {"error": "<message>"}}, where <value> is the
document converted with the same rules as Hearth's `TOMLValue.jsonValue`:
- tables are objects, arrays are arrays, integers, booleans and finite floats are themselves;
- inf, -inf and nan (of either sign) are the strings "inf", "-inf" and "nan";
- an offset date-time is "YYYY-MM-DDTHH:MM:SS[.ffffff]" followed by "Z" for a zero offset or "+HH:MM";
  a local date-time has no offset; a local date is "YYYY-MM-DD"; a local time "HH:MM:SS[.ffffff]".
  The fraction is Python's microseconds with trailing zeros dropped, and no dot when it is zero.
Files are read as bytes and decoded as strict UTF-8, so a file that is not UTF-8 is an error; newlines
are left alone (tomllib itself reads CRLF as LF).
"""

import datetime
import json
import math
import pathlib
import sys
import tomllib
import unicodedata


def fraction(microsecond: int) -> str:
    return f".{microsecond:06d}".rstrip("0") if microsecond else ""


def clock(t: datetime.time | datetime.datetime) -> str:
    return f"{t.hour:02d}:{t.minute:02d}:{t.second:02d}{fraction(t.microsecond)}"


def day(d: datetime.date) -> str:
    return f"{d.year:04d}-{d.month:02d}-{d.day:02d}"


def convert(value):
    if isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return value
    if isinstance(value, datetime.datetime):  # before date: a datetime is a date too
        text = f"{day(value)}T{clock(value)}"
        offset = value.utcoffset()
        if offset is None:
            return text
        minutes = int(offset.total_seconds()) // 60
        if minutes == 0:
            return text + "Z"
        sign = "+" if minutes > 0 else "-"
        return f"{text}{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"
    if isinstance(value, datetime.date):
        return day(value)
    if isinstance(value, datetime.time):
        return clock(value)
    if isinstance(value, list):
        return [convert(item) for item in value]
    if isinstance(value, dict):
        # Hearth's JSON maps (Swift strings) cannot hold two keys equal under Unicode normalization
        # (its JSON reader refuses them): as `jsonValue` does, the later one's value goes to the
        # first one's key. TOML itself keeps them apart; TOMLTests checks that on the table.
        out, first = {}, {}
        for key, item in value.items():
            canonical = unicodedata.normalize("NFC", key)
            out[first.setdefault(canonical, key)] = convert(item)
        return out
    raise TypeError(f"unexpected {type(value).__name__} from tomllib")


def load(path: pathlib.Path) -> dict:
    try:
        text = path.read_bytes().decode("utf-8")
        return {"ok": convert(tomllib.loads(text))}
    except Exception as error:  # TOMLDecodeError, UnicodeDecodeError, RecursionError on deep nesting
        return {"error": f"{type(error).__name__}: {error}"}


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit("usage: reference.py DIRECTORY")
    folder = pathlib.Path(sys.argv[1])
    results = {path.name: load(path) for path in sorted(folder.glob("*.toml"))}
    json.dump(results, sys.stdout, allow_nan=False, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
