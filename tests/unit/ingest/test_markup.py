"""Markdown and MDX read as structure: plain text without syntax, headings as section paths, code kept apart,
list items and table rows as sentences of their own; plain text and JSONL documents chunked as before."""

from __future__ import annotations

import re

import pytest

from retrieval.ingest.corpus import chunk_documents, document_text, load_corpus, read_corpus
from retrieval.ingest.markup import SECTION_KEY, parse, plain_inline, strip_esm
from retrieval.core.errors import CorpusError
from retrieval.core.text import whole_sentences
from retrieval.core.types import Document

PAGE = """\
---
title: Do YAML
tenant: docs
versao: 3
---
# Hooks do `React`

O hook **useLayoutEffect** roda *antes* da pintura; veja [useEffect](https://react.dev/useEffect) e <b>compare</b>.

## useLayoutEffect

### Uso

1. Meça o layout
   - leia `getBoundingClientRect()`
   - guarde a altura
2. Renderize de novo

| Hook | Quando roda |
|---|---|
| `useEffect` | depois da pintura |
| `useLayoutEffect` | antes da pintura |

```js
useLayoutEffect(() => {
  medir();
}, []);
```

    npm install react

## Armadilhas

> Evite no servidor: o React avisa.

<!-- nota interna -->
Fim com ![um diagrama](d.png) e uma<br>quebra.
"""

MDX = """\
---
tenant: docs
---
import Tabs from '@theme/Tabs';
import {
  TabItem,
} from '@theme/TabItem';
export const meta = {
  autor: 'x',
};

# Migração

<Tabs>
<TabItem value="npm" label={"npm"}>

Rode `lince import` na pasta <Kbd>raiz</Kbd> do projeto {props.versao}.

</TabItem>
</Tabs>

```js
import x from 'y';
```
"""

#: Syntax that must never reach a chunk's indexed text or an answer sentence.
SYNTAX = re.compile(r"(^|\n)\s*(#{1,6}\s|[-*+]\s|\d+[.)]\s|>)|`|\*\*|\]\(|<[A-Za-z/!]|\||\{|^---")


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "hooks.md").write_text(PAGE, encoding="utf-8")
    (tmp_path / "migracao.mdx").write_text(MDX, encoding="utf-8")
    (tmp_path / "nota.txt").write_text("Nota\n\n# Não é título\n- item `x`\n", encoding="utf-8")
    return tmp_path


def test_a_markdown_page_reads_as_sections_of_plain_lines_and_code(folder) -> None:
    docs = {d.id: d for d in load_corpus(folder)}
    doc = docs["hooks"]
    assert (doc.title, doc.markup, doc.metadata) == ("Hooks do React", "markdown", {"tenant": "docs", "versao": 3, "format": "markdown",
                                                     "folder": (".",)})
    assert doc.text.startswith("O hook **useLayoutEffect**")  # the document keeps its source (the title removed)
    chunks = chunk_documents([doc], 120, 30)
    assert [c.chunk_id for c in chunks] == ["hooks#0", "hooks#1", "hooks#2"]
    assert [c.metadata.get(SECTION_KEY) for c in chunks] == [None, "useLayoutEffect › Uso", "Armadilhas"]
    assert all(c.metadata["tenant"] == "docs" and c.metadata["versao"] == 3 for c in chunks)
    intro, uso, armadilhas = chunks
    assert intro.text == ("O hook useLayoutEffect roda antes da pintura; veja useEffect e compare.")
    assert uso.text == ("Meça o layout\nleia getBoundingClientRect()\nguarde a altura\nRenderize de novo\n"
                        "Hook: useEffect; Quando roda: depois da pintura\n"
                        "Hook: useLayoutEffect; Quando roda: antes da pintura")
    assert uso.code == "useLayoutEffect(() => {\n  medir();\n}, []);\n\nnpm install react"
    assert armadilhas.text == "Evite no servidor: o React avisa.\nFim com um diagrama e uma quebra."
    assert armadilhas.code == ""
    # the section path is indexed (the context line), the code too; the title once
    assert uso.indexed_text == f"Hooks do React\nuseLayoutEffect › Uso\n{uso.text}\n{uso.code}"
    assert uso.passage("title-period").startswith("Hooks do React. useLayoutEffect › Uso Meça o layout")
    for chunk in chunks:
        assert not SYNTAX.search(chunk.text), chunk.text


def test_each_list_item_and_table_row_is_a_sentence_and_no_code_line_is_one(folder) -> None:
    (doc,) = [d for d in load_corpus(folder) if d.id == "hooks"]
    uso = chunk_documents([doc], 120, 30)[1]
    assert whole_sentences(uso.text) == [
        "Meça o layout", "leia getBoundingClientRect()", "guarde a altura", "Renderize de novo",
        "Hook: useEffect; Quando roda: depois da pintura", "Hook: useLayoutEffect; Quando roda: antes da pintura"]
    code_lines = {line.strip() for line in uso.code.split("\n") if line.strip()}
    assert not code_lines & set(whole_sentences(uso.text))


def test_mdx_drops_imports_exports_jsx_and_expressions_but_keeps_code(folder) -> None:
    doc = {d.id: d for d in load_corpus(folder)}["migracao"]
    assert (doc.title, doc.markup) == ("Migração", "mdx")  # the heading after the imports is the title
    assert "import Tabs" not in doc.text and "export const" not in doc.text
    (chunk,) = chunk_documents([doc], 120, 30)
    assert chunk.text == "Rode lince import na pasta raiz do projeto ."
    assert chunk.code == "import x from 'y';"  # an import inside a code fence is code, kept
    assert SECTION_KEY not in chunk.metadata


def test_a_text_file_is_read_as_before(folder) -> None:
    doc = {d.id: d for d in load_corpus(folder)}["nota"]
    assert (doc.title, doc.text, doc.markup) == ("Nota", "# Não é título\n- item `x`\n", "")
    (chunk,) = chunk_documents([doc], 120, 30)
    assert chunk.text == "# Não é título - item `x`" and chunk.code == "" and chunk.context == ""
    assert SECTION_KEY not in chunk.metadata


def test_a_chunk_never_spans_two_sections() -> None:
    body = "\n\n".join(f"## Parte {n}\n\n" + " ".join(f"Frase {n}.{k} com quatro palavras." for k in range(12))
                       for n in range(3))
    doc = Document("longo", "Longo", body, {}, "markdown")
    chunks = chunk_documents([doc], 20, 5)
    assert len(chunks) > 3 and [c.position for c in chunks] == list(range(len(chunks)))
    for chunk in chunks:
        part = chunk.metadata[SECTION_KEY].removeprefix("Parte ")
        assert all(s.startswith(f"Frase {part}.") for s in whole_sentences(chunk.text)), chunk
        assert len(chunk.text.split()) <= 20
    assert [c.metadata[SECTION_KEY] for c in chunks] == sorted(c.metadata[SECTION_KEY] for c in chunks)


def test_heading_levels_nest_and_climb() -> None:
    source = "# A\n\nx.\n\n## B\n\ny.\n\n### C\n\nz.\n\n## D\n\nw.\n\n# E\n\nv.\n"
    assert [(s.label, [b.text for b in s.blocks]) for s in parse(source)] == [
        ("A", ["x."]), ("A › B", ["y."]), ("A › B › C", ["z."]), ("A › D", ["w."]), ("E", ["v."])]
    assert document_text(Document("d", "t", source, {}, "markdown")) == "A\nx.\nB\ny.\nC\nz.\nD\nw.\nE\nv."


def test_inline_syntax_and_esm_helpers() -> None:
    assert plain_inline("O `useState` e **[links](x)** ~~velhos~~ &amp; <i>mais</i>") == \
        "O useState e links velhos & mais"
    assert strip_esm("import a from 'b';\n\n```js\nimport c from 'd';\n```\nexport default X\nfim\n\ntexto") == \
        "\n```js\nimport c from 'd';\n```\n\ntexto"


def test_a_page_with_no_text_once_read_is_skipped_and_md_beside_mdx_keep_their_extensions(tmp_path) -> None:
    (tmp_path / "vazio.md").write_text("<!-- só um comentário -->\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=r"holds no document .*vazio\.md: no text once read as Markdown"):
        load_corpus(tmp_path)
    (tmp_path / "cheio.md").write_text("Tem texto.\n", encoding="utf-8")
    docs, report = read_corpus(tmp_path)
    assert [d.id for d in docs] == ["cheio"]
    assert [(s.path, s.reason) for s in report.skipped] == [("vazio.md", "no_text")]
    (tmp_path / "vazio.md").write_text("Agora tem texto.\n", encoding="utf-8")
    (tmp_path / "vazio.mdx").write_text("Outro.\n", encoding="utf-8")
    assert sorted(d.id for d in load_corpus(tmp_path)) == ["cheio", "vazio.md", "vazio.mdx"]


def test_headings_alone_are_the_text_and_code_alone_is_kept() -> None:
    (only,) = chunk_documents([Document("h", "H", "## Um\n\n## Dois\n", {}, "markdown")], 120, 30)
    assert (only.text, only.code) == ("Um\nDois", "")
    (code,) = chunk_documents([Document("c", "C", "## Exemplo\n\n```\nlince deploy\n```\n", {}, "markdown")], 120, 30)
    assert (code.text, code.code, code.metadata[SECTION_KEY]) == ("", "lince deploy", "Exemplo")


def test_an_admonition_is_its_title_and_its_body_never_the_marker() -> None:
    """MkDocs' ``!!! warning "Atenção"`` with its indented body: the title a block, the body its own blocks; inside
    a code fence nothing changes."""
    from retrieval.ingest.markup import plain_text

    src = ('# Guia\n\nAntes.\n\n!!! warning "Atenção"\n    Não desligue o servidor.\n\n    Segundo parágrafo.\n\n'
           '??? note\n    Corpo recolhido.\n\nDepois.\n\n```\n!!! dentro de código\n```\n')
    assert plain_text(src).splitlines() == ["Guia", "Antes.", "Atenção", "Não desligue o servidor.",
                                            "Segundo parágrafo.", "Corpo recolhido.", "Depois.",
                                            "!!! dentro de código"]
