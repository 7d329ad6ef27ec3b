"""Checks recipe pages as Google reads them for Recipe rich results, with extruct (PyPI).

    tests/.venv/bin/python tests/validators/check_recipe_page.py URL [URL ...]

Each page's JSON-LD must hold a schema.org Recipe per language carrying Google's required properties
(`name`, `image`) and the recommended ones a recipe of ours can truthfully have (`author`,
`datePublished` when the recipe says when it was published, `description`, `keywords`, `prepTime`,
`cookTime`, `totalTime`, `recipeCategory`, `recipeCuisine` when the recipe names its cuisine,
`recipeIngredient`, `recipeInstructions`, `recipeYield`), plus `inLanguage`; every image must be
fetchable, of an image type, at least 50,000 pixels, and several images must come in Google's 16:9,
4:3 and 1:1 shapes (one image is enough). The page also needs `og:image`. `aggregateRating`,
`nutrition` and `video` are left out on purpose: we have no ratings, nutrition data or videos to state.
Prints every problem and exits non-zero when there is one. `--expect-date` and `--expect-cuisine`
make the optional properties required for the pages given.
"""

import re
import struct
import sys
import urllib.request

import extruct

REQUIRED = ["name", "image"]
RECOMMENDED = ["author", "description", "keywords", "prepTime", "cookTime", "totalTime", "recipeCategory",
               "recipeIngredient", "recipeInstructions", "recipeYield", "inLanguage"]


def fetch(url):
    with urllib.request.urlopen(url, timeout=30) as response:
        return response.status, response.headers.get("Content-Type", ""), response.read()


def image_size(data):
    """Width and height of a PNG, a JPEG or an SVG (from its root's width and height)."""
    if data.lstrip()[:4] == b"<svg":
        head = data[:400].decode("utf-8", "replace")
        width, height = re.search(r'width="(\d+)"', head), re.search(r'height="(\d+)"', head)
        return (int(width.group(1)), int(height.group(1))) if width and height else None
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return struct.unpack(">II", data[16:24])
    if data[:2] == b"\xff\xd8":
        i = 2
        while i < len(data):
            marker, length = data[i + 1], struct.unpack(">H", data[i + 2:i + 4])[0]
            if marker in (0xC0, 0xC1, 0xC2):
                height, width = struct.unpack(">HH", data[i + 5:i + 9])
                return width, height
            i += 2 + length
    return None


def check(url, expect_date, expect_cuisine):
    problems = []
    status, _, body = fetch(url)
    if status != 200:
        return [f"{url}: answered {status}"]
    data = extruct.extract(body, base_url=url, syntaxes=["json-ld", "opengraph"], uniform=True)
    recipes = [item for item in data["json-ld"] if item.get("@type") == "Recipe"]
    for item in data["json-ld"]:
        if isinstance(item, list):
            recipes += [i for i in item if i.get("@type") == "Recipe"]
    if not recipes:
        return [f"{url}: no schema.org Recipe in its JSON-LD"]
    wanted = REQUIRED + RECOMMENDED + (["datePublished"] if expect_date else []) + \
        (["recipeCuisine"] if expect_cuisine else [])
    for recipe in recipes:
        where = f"{url} ({recipe.get('inLanguage', '?')})"
        problems += [f"{where}: no `{prop}`" for prop in wanted if recipe.get(prop) in (None, "", [])]
    images = recipes[0].get("image") or []
    images = images if isinstance(images, list) else [images]
    shapes = set()
    for image in images:
        image_url = image.get("url") if isinstance(image, dict) else image
        status, content_type, image_bytes = fetch(image_url)
        size = image_size(image_bytes)
        if status != 200 or not content_type.startswith("image/") or size is None:
            problems.append(f"{url}: image {image_url} answered {status} {content_type!r}")
            continue
        width, height = size
        if width * height < 50_000:
            problems.append(f"{url}: image {image_url} is {width}x{height}, under 50,000 pixels")
        shapes.add((width * 9 == height * 16 and "16x9") or (width * 3 == height * 4 and "4x3")
                   or (width == height and "1x1") or "other")
    if len(images) > 1 and not {"16x9", "4x3", "1x1"} <= shapes:
        problems.append(f"{url}: images come in {sorted(shapes)}, not Google's 16:9, 4:3 and 1:1")
    og = {key: value for item in data["opengraph"] for key, value in item.items()}
    if not og.get("og:image"):
        problems.append(f"{url}: no og:image")
    return problems


def main(args):
    expect_date = "--expect-date" in args
    expect_cuisine = "--expect-cuisine" in args
    urls = [a for a in args if not a.startswith("--")]
    problems = [p for url in urls for p in check(url, expect_date, expect_cuisine)]
    for problem in problems:
        print(problem)
    print(f"{len(problems)} problem(s) in {len(urls)} recipe page(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
