"""The sentence classification of the source documents (attention_claims.framework.sentences)."""

from __future__ import annotations

import textwrap

import pytest

from attention_claims.framework.records import SOURCES_DIR, load_catalog
from attention_claims.framework.sentences import (
    KINDS,
    SENTENCES_DIR,
    SentenceDataError,
    audit,
    classification_maps,
    load_all,
    load_classification,
)
from attention_claims.tools.sentences import claim_dicts

DOC = textwrap.dedent("""\
    # 标题

    注意力矩阵是低秩的。我们下面来看原因。你觉得呢？

    这是一个定理的重述。
""")
CLAIMS = [{"id": "low-rank", "verdict": "false", "source": {"document": "d.txt", "quote": "注意力矩阵是低秩的"}}]


def _write(tmp_path, body: str):
    p = tmp_path / "d.toml"
    p.write_text('document = "d.txt"\n' + textwrap.dedent(body), encoding="utf-8")
    return p


@pytest.mark.parametrize("body, where", [
    ('[[sentence]]\nkind = "heading"\n', "sentence 1: field 'text'"),
    ('[[sentence]]\ntext = "x"\nkind = "poem"\n', "sentence 1: field 'kind'"),
    ('[[sentence]]\ntext = "x"\nkind = "claim"\n', "sentence 1: field 'claim'"),
    ('[[sentence]]\ntext = "x"\nkind = "heading"\nclaim = "a"\n', "sentence 1: field 'claim'"),
    ('[[sentence]]\ntext = "x"\nkind = "opinion"\n', "sentence 1: field 'reason'"),
    ('[[sentence]]\ntext = "x"\nkind = "heading"\n[[sentence]]\ntext = "y"\nkind = "heading"\ncolour = 1\n',
     "sentence 2: field 'colour'"),
])
def test_a_malformed_entry_names_the_file_the_entry_and_the_field(tmp_path, body, where):
    p = _write(tmp_path, body)
    with pytest.raises(SentenceDataError) as info:
        load_classification(p)
    assert str(info.value).startswith(f"{p}: {where}")


def test_a_file_without_document_or_not_toml_is_named(tmp_path):
    p = tmp_path / "x.toml"
    p.write_text("[[sentence]]\n", encoding="utf-8")
    with pytest.raises(SentenceDataError, match=r"x\.toml: field 'document'"):
        load_classification(p)
    p.write_text("document = \n", encoding="utf-8")
    with pytest.raises(SentenceDataError, match=r"x\.toml: not valid TOML"):
        load_classification(p)


def test_two_files_for_one_document_are_refused(tmp_path):
    for name in ("a.toml", "b.toml"):
        (tmp_path / name).write_text('document = "d.txt"\n', encoding="utf-8")
    with pytest.raises(SentenceDataError, match=r"b\.toml: field 'document': d\.txt is classified by another"):
        load_all(tmp_path)


def test_audit_lists_unclassified_sentences_then_nothing_once_classified(tmp_path):
    result = audit("d.txt", DOC, CLAIMS, [])
    assert result.unclassified == ["标题", "我们下面来看原因。", "你觉得呢？", "这是一个定理的重述。"]
    assert result.counts == {"claim": 1, "not-claim": 0, "unclassified": 4, "total": 5}
    _, entries = load_classification(_write(tmp_path, """\
        [[sentence]]
        text = "# 标题"
        kind = "heading"
        [[sentence]]
        text = "我们下面来看原因。你觉得呢？"
        kind = "setup"
        reason = "a transition and a question to the reader"
        [[sentence]]
        text = "这是一个定理的重述"
        kind = "restatement"
        claim = "low-rank"
        reason = "the same bound in words"
    """))
    result = audit("d.txt", DOC, CLAIMS, entries)
    assert result.ok, result.problems()
    assert result.counts == {"claim": 1, "not-claim": 4, "unclassified": 0, "total": 5}


def test_audit_finds_missing_excerpts_stale_entries_and_unknown_claims(tmp_path):
    _, entries = load_classification(_write(tmp_path, """\
        [[sentence]]
        text = "不在文中"
        kind = "heading"
        [[sentence]]
        text = "注意力矩阵是低秩的"
        kind = "opinion"
        reason = "already a claim: this entry classifies nothing"
        [[sentence]]
        text = "这是一个定理的重述"
        kind = "claim"
        claim = "no-such-claim"
    """))
    result = audit("d.txt", DOC, CLAIMS, entries)
    assert [e.index for e in result.not_found] == [1]
    assert [e.index for e in result.idle] == [2]
    assert [e.index for e in result.unknown_claims] == [3]
    lines = result.problems("sources/sentences/d.toml")
    assert any("sentence 3: field 'claim': no record has id 'no-such-claim'" in x for x in lines)
    assert not result.ok


def test_a_claim_entry_marks_its_sentence_as_that_claim(tmp_path):
    _, entries = load_classification(_write(tmp_path, """\
        [[sentence]]
        text = "这是一个定理的重述"
        kind = "claim"
        claim = "low-rank"
    """))
    result = audit("d.txt", DOC, CLAIMS, entries)
    assert result.counts["claim"] == 2
    kinds, claims = classification_maps(entries)
    assert kinds == {} and claims == {"这是一个定理的重述": "low-rank"}


def test_every_kind_has_a_meaning():
    assert KINDS[0] == "claim" and len(set(KINDS)) == len(KINDS)


def test_the_committed_classification_is_consistent_with_the_documents_and_records():
    """What ``sources/sentences/`` says holds: every excerpt is in its document, every entry classifies
    something, every claim id has a record (completeness: test_every_sentence_is_accounted_for)."""
    catalog = load_catalog()
    claims, known = claim_dicts(catalog), {c.id for c in catalog}
    problems = []
    for doc, entries in load_all(SENTENCES_DIR).items():
        result = audit(doc, (SOURCES_DIR / doc).read_text(encoding="utf-8"), claims, entries, known)
        problems += result.problems(doc)[len(result.unclassified):]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("document", sorted(p.name for p in SOURCES_DIR.glob("*.txt")))
def test_every_sentence_is_accounted_for(document):
    """Issue 14: every sentence of every source document is a claim (a record's quote, or a ``claim``
    entry) or is classified as not a claim with a reason, in ``sources/sentences/<stem>.toml``."""
    classification = load_all(SENTENCES_DIR)
    assert document in classification, f"no sources/sentences/{document.removesuffix('.txt')}.toml"
    catalog = load_catalog()
    result = audit(document, (SOURCES_DIR / document).read_text(encoding="utf-8"), claim_dicts(catalog),
                   classification[document], {c.id for c in catalog})
    assert result.ok, "\n".join(result.problems(f"sources/sentences/{document.removesuffix('.txt')}.toml"))
    assert result.counts["unclassified"] == 0 and result.counts["total"] > 0


# Issue 34.2: the sentence cuts of the suite's five documents, as SHA-256 of the JSON list of
# [index, start, end] of every sentence (render.documents.annotate, no claims). 000-003 are as cut before
# pysbd was used; 004's citation line ("苏剑林. (Dec. 12, 2023). 《...》\[Blog post\]. Retrieved from")
# is no longer cut after "Dec." and is cut after "[Blog post]."; its footer is cut after
# "(http://www.laogui.com)." (337 -> 336 sentences), all after every claim it carries; the classification
# (by verbatim excerpt, not by index) covers the new sentences, so nothing else moved.
SENTENCE_CUTS = {
    "000_ab5bd5ab0e7f4d86.txt": (43, "28ae2202398e5dbfe94081e4d5d7cfb62f906985c4c453d0d8fa75daf82cd94c"),
    "001_7b7f411bbe8a3bef.txt": (56, "b335eb628603637e59a04f1e89b9a67419043130b40d3f5e94e4bc0f76e6a620"),
    "002_3cda90c9fbb885ae.txt": (45, "b21290d8e8caf1939e5bf919bd245527009dd268cd36f70f72b0f14548f4d708"),
    "003_a0ad15dda516ed1d.txt": (202, "8293d746612b7eca5da187363e17e6ab889c6d3a6e214eccfbd1292ebf185ce5"),
    "004_5f57af8801c437dc.txt": (336, "182dde48877e6769bd7b7041c488273f84eddc433bbaf8c2d5b7e9ff0e23fb2a"),
}


def _cuts(name: str, text: str) -> list[list[int]]:
    from attention_claims.framework.render.documents import annotate

    doc = annotate(name, text, [])
    return [[s.index, s.start, s.end] for b in doc.blocks for row in b.rows for part in row for s in part]


@pytest.mark.parametrize("document", sorted(SENTENCE_CUTS))
def test_the_five_documents_keep_their_sentence_cuts(document):
    import hashlib
    import json

    cuts = _cuts(document, (SOURCES_DIR / document).read_text(encoding="utf-8"))
    n, digest = SENTENCE_CUTS[document]
    assert (len(cuts), hashlib.sha256(json.dumps(cuts).encode()).hexdigest()) == (n, digest)


@pytest.mark.parametrize("text, first", [
    ("Linear attention was proposed earlier [Tsa19]. Note that it is linear in $N$.",
     "Linear attention was proposed earlier [Tsa19]."),
    ("The map is injective when $N>D^{2}$. Note that $D$ is the head size.",
     "The map is injective when $N>D^{2}$."),
    ("Fix a constant $C$. Subsequently we bound the rank by $C$.", "Fix a constant $C$."),
    ("The rank is at most $$d$$. Subsequently it grows.", "The rank is at most $$d$$."),
])
def test_english_sentences_end_after_a_citation_or_a_formula(text, first):
    """Issue 34.2: a full stop after ``]`` or a formula ends an English sentence (pysbd decides)."""
    cuts = _cuts("note.md", text)
    assert len(cuts) == 2 and text[cuts[0][1]:cuts[0][2]] == first


@pytest.mark.parametrize("text, n", [
    ("The value is $a. B$ exactly. Then it holds.", 2),
    ("A list: 1. 低秩问题 2. 解决方案", 1),
    ("Published in 2022. 10559 copies were sold.", 1),
])
def test_formulas_list_numbers_and_chinese_are_not_cut_at_a_full_stop(text, n):
    """A full stop inside a formula, before a list number's Chinese item or before a digit is no English
    sentence end."""
    cuts = _cuts("note.md", text)
    assert len(cuts) == n
    assert all(text[a:b].count("$") % 2 == 0 for _i, a, b in cuts)


def test_todo_writes_a_subfolder_document_of_any_name_to_its_own_file(tmp_path, capsys):
    """``sentences --todo --write`` for ``papers/x".md`` (issue 34): its stub file is named by the
    document's slug, its ``document`` is a valid TOML string, and the English sentences are offered one
    by one (cut after ``[Tsa19].``)."""
    import hashlib

    from attention_claims.framework.render.model import document_slug
    from attention_claims.tools.sentences import main

    sources, recs = tmp_path / "sources", tmp_path / "claims"
    name = 'papers/x".md'
    text = "Linear attention uses a feature map [Tsa19]. Note that its cost is linear in $N$.\n"
    (sources / "papers").mkdir(parents=True)
    (sources / name).write_text(text, encoding="utf-8")
    (sources / "SHA256SUMS").write_text(f"{hashlib.sha256(text.encode()).hexdigest()}  {name}\n", encoding="utf-8")
    recs.mkdir()
    assert main(["--todo", "--write", "--claims-dir", str(recs), "--claims-sources", str(sources)]) == 1
    written = sources / "sentences" / f"{document_slug(name)}.toml"
    assert written.exists(), capsys.readouterr().out
    import tomllib

    data = tomllib.loads(written.read_text(encoding="utf-8"))  # stubs: kind to fill in, so not load_all
    assert data["document"] == name
    assert [e["text"] for e in data["sentence"]] == ["Linear attention uses a feature map [Tsa19].",
                                         "Note that its cost is linear in $N$."]


@pytest.mark.parametrize("text, n", [
    ("We use e.g. the softmax, i.e. the normalised exponential. It is smooth.", 2),
    ("See Fig. 3 and Eq. 2 for the bound. Then it holds.", 2),
    ("By Eq. (2) and Thm. 3, cf. Vaswani et al. (2017), it holds. Then it grows.", 2),
    ("Katharopoulos et al. show this. It is linear.", 2),
    ("The rank is low. The norm is small.", 2),
])
def test_abbreviations_do_not_end_an_english_sentence(text, n):
    """pysbd decides every full stop after a letter too: ``e.g.``, ``i.e.``, ``Fig.``, ``Eq.``, ``Thm.``,
    ``cf.``, ``et al.`` are not sentence ends (render.documents.MATHS_ABBREVIATIONS)."""
    assert len(_cuts("note.md", text)) == n
