"""Reading documents: corpora and question sets through the project's contracts (:mod:`.corpus`: JSON files in
:mod:`.records`, ids in :mod:`.ids`, a document's checks in :mod:`.documents`, a question's in :mod:`.questions`,
SQuAD, BEIR and TREC in :mod:`.datasets`), a folder of files in every declared format (:mod:`.formats`,
:mod:`.folder`), Markdown read as structure (:mod:`.markup`), parents split into chunks (:mod:`.chunking`), and
where each chunk sits in its source (:mod:`.location`)."""

from . import html, office, pdf, text, slides, sheets, epub  # noqa: F401 - each module declares its formats

__all__ = ["collection", "corpus", "folder", "formats", "location", "upload"]
