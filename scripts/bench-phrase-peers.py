"""Phrase search peers on the same data and queries as `cargo bench -p domain --bench quotes search`.

The domain bench writes every passage of the Changelog corpus (normalised words, folded speaker name)
and its queries, with the total it found for each, to tests/.work/phrase-peers/: the random ones
(queries.jsonl) and the phrases of common words (common-queries.jsonl). This script indexes the
passages with tantivy (Python bindings; positions on, the text stored) and SQLite FTS5, runs each query
as a phrase (with the speaker as a filter when the query has one) for the top 10 hits with their text
and the total, and prints p50/p99 latency, index size, and how many totals differ from ours, for each
set of queries.

    tests/.work/venv/bin/python scripts/bench-phrase-peers.py   (scripts/bench-quotes.sh runs it)
"""

import json
import os
import shutil
import sqlite3
import sys
import time

import tantivy

WORK = os.path.join(os.path.dirname(__file__), "..", "tests", ".work", "phrase-peers")


def percentile(values, p):
    values = sorted(values)
    return values[round((len(values) - 1) * p)]


def size_of(path):
    if os.path.isfile(path):
        return os.path.getsize(path)
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(path) for f in files)


def files_in(path):
    return 1 if os.path.isfile(path) else sum(len(files) for _, _, files in os.walk(path))


def report(name, times, totals, queries, path, build_s):
    wrong = sum(1 for total, q in zip(totals, queries) if total != q["total"])
    print(
        f"{name}: {len(times)} queries, p50 {percentile(times, 0.5):.3f} ms, p99 {percentile(times, 0.99):.3f} ms, "
        f"max {max(times):.3f} ms; index {size_of(path) / 1048576:.0f} MiB in {files_in(path)} files, "
        f"built in {build_s:.1f} s; totals that differ from Commonplace's: {wrong}"
    )


QUERY_SETS = {"random": "queries.jsonl", "common words": "common-queries.jsonl"}


def main():
    passages = [json.loads(line) for line in open(os.path.join(WORK, "passages.jsonl"))]
    sets = {
        name: [json.loads(line) for line in open(os.path.join(WORK, file))]
        for name, file in QUERY_SETS.items()
        if os.path.exists(os.path.join(WORK, file))
    }
    counts = ", ".join(f"{len(queries)} {name}" for name, queries in sets.items())
    print(f"{len(passages)} passages, queries: {counts}; tantivy {tantivy.__version__}, SQLite {sqlite3.sqlite_version}")

    # tantivy: the text with positions (phrase queries need them) and stored; the speaker as one term.
    path = os.path.join(WORK, "tantivy")
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("text", stored=True, index_option="position")
    builder.add_text_field("speaker", stored=False, tokenizer_name="raw")
    schema = builder.build()
    index = tantivy.Index(schema, path=path)
    started = time.perf_counter()
    writer = index.writer(heap_size=512_000_000, num_threads=1)
    for passage in passages:
        writer.add_document(tantivy.Document(text=passage["text"], speaker=passage["speaker"]))
    writer.commit()
    writer.wait_merging_threads()
    build_s = time.perf_counter() - started
    index.reload()
    searcher = index.searcher()
    for name, queries in sets.items():
        times, totals = [], []
        for q in queries:
            words = q["q"].split()
            if len(words) > 1:
                phrase = tantivy.Query.phrase_query(schema, "text", words)
            else:
                phrase = tantivy.Query.term_query(schema, "text", words[0])
            if q["speaker"] is not None:
                speaker = tantivy.Query.term_query(schema, "speaker", q["speaker"])
                query = tantivy.Query.boolean_query([(tantivy.Occur.Must, phrase), (tantivy.Occur.Must, speaker)])
            else:
                query = phrase
            started = time.perf_counter()
            result = searcher.search(query, 10, count=True)
            texts = [searcher.doc(address)["text"] for _, address in result.hits]
            times.append((time.perf_counter() - started) * 1000)
            totals.append(result.count)
            assert len(texts) == min(10, result.count)
        report(f"tantivy, {name}", times, totals, queries, path, build_s)

    # SQLite FTS5: the text indexed, the speaker a plain column.
    path = os.path.join(WORK, "fts5.sqlite")
    if os.path.exists(path):
        os.remove(path)
    db = sqlite3.connect(path)
    started = time.perf_counter()
    db.execute("CREATE VIRTUAL TABLE passages USING fts5(text, speaker UNINDEXED)")
    db.executemany("INSERT INTO passages (text, speaker) VALUES (?, ?)", ((p["text"], p["speaker"]) for p in passages))
    db.commit()
    build_s = time.perf_counter() - started
    for name, queries in sets.items():
        times, totals = [], []
        for q in queries:
            match = '"' + q["q"] + '"'
            where, args = "passages MATCH ?", [match]
            if q["speaker"] is not None:
                where, args = where + " AND speaker = ?", args + [q["speaker"]]
            started = time.perf_counter()
            (total,) = db.execute(f"SELECT count(*) FROM passages WHERE {where}", args).fetchone()
            rows = db.execute(f"SELECT rowid, text FROM passages WHERE {where} ORDER BY rowid LIMIT 10", args).fetchall()
            times.append((time.perf_counter() - started) * 1000)
            totals.append(total)
            assert len(rows) == min(10, total)
        report(f"SQLite FTS5, {name}", times, totals, queries, path, build_s)

if __name__ == "__main__":
    sys.exit(main())
