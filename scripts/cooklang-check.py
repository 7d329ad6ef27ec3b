#!/usr/bin/env python3
"""Reads a build's Cooklang dump with the official parser's Python bindings (PyPI `cooklang-bindings`,
cooklang-rs inside) and compares every file with the same recipe in the JSON dump: ingredients (name,
quantity, unit), steps (text) and timers (minutes). Prints the share that comes back the same.

    bash scripts/cooklang-check.sh [DIST]     # makes tests/.venv-cooklang and runs this
"""
import glob
import json
import os
import sys
import zipfile

import cooklang


def steps_of(recipe):
    """Our steps from a parsed recipe: ingredient-only steps are ingredient lines; a timer that ends a
    step after its sentence is the step's timer."""
    out = []
    for section in recipe.sections:
        for block in section.blocks:
            if not isinstance(block, cooklang.Step):
                continue
            items = [i for i in block.items if not (isinstance(i, cooklang.TextItem) and not i.value.strip())]
            if len(items) == 1 and isinstance(items[0], cooklang.IngredientRef):
                continue
            minutes = None
            if items and isinstance(items[-1], cooklang.TimerRef):
                before = "".join(i.value for i in items[:-1] if isinstance(i, cooklang.TextItem)).rstrip()
                if before and not before[-1].isalnum():
                    minutes = items[-1].timer.quantity.value
                    items = items[:-1]
            text = "".join(i.value for i in items if isinstance(i, cooklang.TextItem))
            out.append((" ".join(text.split()), minutes))
    return out


def main(dist):
    docs = {}
    for path in sorted(glob.glob(os.path.join(dist, "recipes*.jsonl"))):
        with open(path, encoding="utf-8") as f:
            for line in f:
                doc = json.loads(line)
                docs[doc["slug"]] = doc
    total = same = 0
    for path in sorted(glob.glob(os.path.join(dist, "recipes-cooklang*.zip"))):
        with zipfile.ZipFile(path) as archive:
            for name in archive.namelist():
                lang, file = name.split("/")
                slug = file[: -len(".cook")]
                text = docs[slug]["texts"][lang]
                recipe = cooklang.parse(archive.read(name).decode("utf-8"))
                total += 1
                got = [(i.name, i.quantity.value if i.quantity else None, i.quantity.unit if i.quantity else None)
                       for i in recipe.ingredients]
                want = [(i["i"].strip(), i["q"], i.get("u")) for i in text["ingredients"]]
                got_steps = steps_of(recipe)
                want_steps = [(" ".join(s["t"].split()), s.get("min")) for s in text["steps"]]
                if got == want and got_steps == want_steps and recipe.servings == docs[slug]["servings"]:
                    same += 1
                elif total - same <= 5:
                    print(f"differs: {name}: {got} / {want}\n  {got_steps}\n  {want_steps}")
    print(f"cooklang-bindings {cooklang.__version__} (cooklang-rs {cooklang.UPSTREAM_VERSION}): "
          f"{same} of {total} Cooklang files read back the same ({100.0 * same / max(total, 1):.1f} %)")
    return 0 if total and same == total else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "dist"))
