"""Building and publishing the book, above what its chapters call (:mod:`mbutils.book`).

* :mod:`mbutils.publish.chapters`: run one chapter on any data (``run-chapter``) and a chapter's
  ``.ipynb`` form (``notebook``);
* :mod:`mbutils.publish.standalone` and :mod:`mbutils.publish.book_index`: the plain Markdown of
  run-chapter's single HTML page, and what that page knows of the book around it;
* :mod:`mbutils.publish.kernel_guard`: a chapter's kernel ends, workers included, with its caller;
* :mod:`mbutils.publish.sphinxext` (``_config.yml``'s Sphinx extension) and
  :mod:`mbutils.publish.page_runs` (pages executed ahead, several at a time);
* :mod:`mbutils.publish.publish`: the book's copies, the launched notebooks' install cell, the PDF.

A module here may import :mod:`mbutils.book`; no module of the book imports this package.
"""
